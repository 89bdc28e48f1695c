import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { Id, pageInput, pageOf, pageStart, type Page } from "@gateway/contract";
import type { JobsContext } from "../context.js";
import type { Job } from "../../generated/prisma/client.js";

export const ListJobsInput = z.object({ tenant_id: Id, ...pageInput(200, 100) });
export type ListJobsInput = z.input<typeof ListJobsInput>;

/** The tenant's jobs, newest first, a page at a time (docs/decisions/0212); limit 0 means 100. */
export async function listJobs({ ctx, input }: { ctx: JobsContext; input: ListJobsInput }): Promise<Page<Job>> {
  const q = parseInput(ListJobsInput, input);
  const after = pageStart(q.cursor);
  const rows = await ctx.prisma.job.findMany({
    where: { tenantId: q.tenant_id, ...(after !== null ? { seq: { lt: after } } : {}) },
    orderBy: { seq: "desc" },
    take: q.limit + 1,
  });
  return pageOf(rows, q.limit, (j) => j.seq);
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
