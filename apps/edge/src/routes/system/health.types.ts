import { z } from "zod";

export const HealthResponse = z.object({
  status: z.enum(["ok", "degraded"]),
  db: z.enum(["ok", "error"]),
  ts: z.string().describe("ISO 8601 UTC"),
});

export const LivenessResponse = z.object({ status: z.literal("ok"), ts: z.string() });
