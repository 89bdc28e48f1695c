import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { Id, listLimit } from "@gateway/contract-schemas";
import type { JobsContext } from "../../db.js";
import type { Job } from "../../generated/prisma/client.js";

export const ListJobsInput = z.object({ tenant_id: Id, limit: listLimit(200, 100) });
export type ListJobsInput = z.input<typeof ListJobsInput>;

/** The tenant's jobs, newest first; limit 0 means 100. */
export async function listJobs({ ctx, input }: { ctx: JobsContext; input: ListJobsInput }): Promise<Job[]> {
  const q = parseInput(ListJobsInput, input);
  return ctx.prisma.job.findMany({ where: { tenantId: q.tenant_id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: q.limit });
}

export const GetJobInput = z.object({ tenant_id: Id, id: Id });
export type GetJobInput = z.input<typeof GetJobInput>;

/** Another tenant's job is as absent as a job that does not exist. */
export async function getJob({ ctx, input }: { ctx: JobsContext; input: GetJobInput }): Promise<Job> {
  const q = parseInput(GetJobInput, input);
  const job = await ctx.prisma.job.findUnique({ where: { id: q.id } });
  if (!job || job.tenantId !== q.tenant_id) throw new AppError("not_found", "No such job.");
  return job;
}
