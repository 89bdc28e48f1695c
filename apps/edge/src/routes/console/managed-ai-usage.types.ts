import { z } from "zod";
import { PathId } from "../../http/units.js";

export const UsageQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).optional().describe("1..100, default 100."),
  before: PathId.optional().describe("Continue after this request id (the last one of the previous page)."),
});
export type UsageQuery = z.infer<typeof UsageQuery>;
