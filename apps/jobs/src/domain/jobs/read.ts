import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { Id, newestFirst, pageInput, type Page } from "@gateway/contract";
import type { JobsContext } from "../context.js";
import type { Job } from "../../generated/prisma/client.js";

export const ListJobsInput = z.object({ tenant_id: Id, ...pageInput(200, 100) });
export type ListJobsInput = z.input<typeof ListJobsInput>;

/** The tenant's jobs, newest first, a page at a time (docs/decisions/0212); limit 0 means 100. */
export async function listJobs({ ctx, input }: { ctx: JobsContext; input: ListJobsInput }): Promise<Page<Job>> {
  const q = parseInput(ListJobsInput, input);
  return newestFirst((args) => ctx.prisma.job.findMany(args), { tenantId: q.tenant_id }, q);
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
