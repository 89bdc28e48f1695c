import type { Emit } from "@gateway/events-runtime";
import { newId } from "@gateway/contract/ids";
import type { Tx } from "../context.js";
import type { Job, Prisma } from "../../generated/prisma/client.js";
import { jobView, type JobStatus } from "./view.js";

export type StatusChange = {
  jobId: string;
  /** Only moves a job that is in this status (a concurrent step that got there first wins). */
  from: JobStatus;
  to: JobStatus;
  result?: Prisma.InputJsonValue;
  error?: { code: string; message: string };
};

/**
 * The one way a job changes status, inside the caller's transaction: the row,
 * its `job.status_changed` event (which drives the runner) and, when the job
 * has a callback target, a `job.updated` delivery row. Returns null when the
 * job was no longer in `from`: nothing was written.
 */
export async function changeJobStatus(tx: Tx, emit: Emit, change: StatusChange): Promise<Job | null> {
  const target = await tx.jobCallbackTarget.findUnique({ where: { jobId: change.jobId }, select: { jobId: true } });
  const moved = await tx.job.updateMany({
    where: { id: change.jobId, status: change.from },
    data: {
      status: change.to,
      ...(change.result !== undefined ? { result: change.result } : {}),
      ...(change.error !== undefined ? { error: change.error } : {}),
      ...(target ? { callbackState: "pending" } : {}),
    },
  });
  if (moved.count === 0) return null;
  const job = await tx.job.findUniqueOrThrow({ where: { id: change.jobId } });
  await emit("job.status_changed", {
    job_id: job.id,
    tenant_id: job.tenantId,
    type: job.type,
    from: change.from,
    to: change.to,
    error_code: change.error?.code ?? null,
  });
  if (target) {
    await tx.jobCallbackDelivery.create({
      data: { eventId: newId("evt"), jobId: job.id, job: jobView(job) as Prisma.InputJsonValue, state: "pending", nextAttemptAt: new Date() },
    });
  }
  return job;
}
