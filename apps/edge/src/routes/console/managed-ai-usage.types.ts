import { z } from "zod";
import { Id, listLimitQuery } from "@gateway/contract-schemas";

export const UsageQuery = z.strictObject({
  limit: listLimitQuery(100).describe("1..100, default 100."),
  before: Id.optional().describe("Continue after this request id (the last one of the previous page)."),
});
export type UsageQuery = z.infer<typeof UsageQuery>;
