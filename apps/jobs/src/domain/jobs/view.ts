import type { Job } from "../../generated/prisma/client.js";

export const JOB_STATUSES = ["pending", "running", "succeeded", "failed", "canceled", "expired"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const TERMINAL: ReadonlySet<string> = new Set(["succeeded", "failed", "canceled", "expired"]);

/** A job as customers see it (GET /v1/jobs/{id}) and as callbacks carry it. */
export type JobView = {
  id: string;
  type: string;
  status: string;
  result: unknown;
  error: unknown;
  callback: { state: string; attempts: number; last_status: number | null };
  created_at: string;
  updated_at: string;
};

export function jobView(j: Job): JobView {
  return {
    id: j.id,
    type: j.type,
    status: j.status,
    result: j.result ?? null,
    error: j.error ?? null,
    callback: { state: j.callbackState, attempts: j.callbackAttempts, last_status: j.callbackLastStatus },
    created_at: j.createdAt.toISOString(),
    updated_at: j.updatedAt.toISOString(),
  };
}
