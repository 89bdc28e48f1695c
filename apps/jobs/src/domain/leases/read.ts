import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { Id, newestFirst, pageInput, type Page } from "@gateway/contract";
import type { JobsContext } from "../context.js";
import type { Job, TronLease } from "../../generated/prisma/client.js";

export type LeaseWithJob = { lease: TronLease; job: Job };

export const ListLeasesInput = z.object({ tenant_id: Id, ...pageInput(200, 100) });
export type ListLeasesInput = z.input<typeof ListLeasesInput>;

async function withJobs(ctx: Pick<JobsContext, "prisma">, leases: TronLease[]): Promise<LeaseWithJob[]> {
  const jobs = new Map((await ctx.prisma.job.findMany({ where: { id: { in: leases.map((l) => l.jobId) } } })).map((j) => [j.id, j]));
  return leases.flatMap((lease) => {
    const job = jobs.get(lease.jobId);
    return job ? [{ lease, job }] : [];
  });
}

/** The tenant's leases with their jobs, newest first, a page at a time (docs/decisions/0212); limit 0 means 100. */
export async function listLeases({ ctx, input }: { ctx: Pick<JobsContext, "prisma">; input: ListLeasesInput }): Promise<Page<LeaseWithJob>> {
  const q = parseInput(ListLeasesInput, input);
  const page = await newestFirst((args) => ctx.prisma.tronLease.findMany(args), { tenantId: q.tenant_id }, q);
  return { items: await withJobs(ctx, page.items), nextCursor: page.nextCursor };
}

export const GetLeaseInput = z.object({ tenant_id: Id, id: Id });
export type GetLeaseInput = z.input<typeof GetLeaseInput>;

/** Another tenant's lease is as absent as one that does not exist. */
export async function getLease({ ctx, input }: { ctx: Pick<JobsContext, "prisma">; input: GetLeaseInput }): Promise<LeaseWithJob> {
  const q = parseInput(GetLeaseInput, input);
  const lease = await ctx.prisma.tronLease.findUnique({ where: { id: q.id } });
  const [found] = lease && lease.tenantId === q.tenant_id ? await withJobs(ctx, [lease]) : [];
  if (!found) throw new AppError("not_found", "No such lease.");
  return found;
}
