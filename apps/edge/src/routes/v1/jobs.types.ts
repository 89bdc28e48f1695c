import { z } from "zod";
import { Id } from "@gateway/contract-schemas";

export const JobView = z.object({
  id: z.string(),
  type: z.string(),
  status: z.enum(["pending", "running", "succeeded", "failed", "canceled", "expired"]),
  result: z.unknown().nullable(),
  error: z.unknown().nullable(),
  callback: z.object({ state: z.string(), attempts: z.number().int(), last_status: z.number().int().nullable() }),
  created_at: z.string(),
  updated_at: z.string(),
});

export const JobResponse = z.object({ data: JobView });
export const JobListResponse = z.object({ data: z.array(JobView) });
export const JobParams = z.object({ id: Id });
export type JobParams = z.infer<typeof JobParams>;
