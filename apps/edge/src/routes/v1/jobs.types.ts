import { z } from "zod";
import { Id, listPageQuery } from "@gateway/contract";
import { NextCursor } from "../page.js";

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
export const JobListResponse = z.object({ data: z.array(JobView), next_cursor: NextCursor });
export const JobListQuery = z.strictObject(listPageQuery({ item: "jobs", fallback: "the newest 100" }));
export type JobListQuery = z.infer<typeof JobListQuery>;
export const JobParams = z.object({ id: Id });
export type JobParams = z.infer<typeof JobParams>;
