import { z } from "zod";
import { Id, listPageQuery } from "@gateway/contract";

export const UsageQuery = z.strictObject({
  ...listPageQuery({ item: "usage records", fallback: "the newest 100" }),
  before: Id.optional().describe("Continue after this request id (the last one of the previous page); `cursor` is the contract's way."),
  mode: z
    .enum(["managed", "byok", "all"])
    .optional()
    .describe("managed (the default): metered records, charged to the balance; byok: bring-your-own-key records, never charged; all: both."),
});
export type UsageQuery = z.infer<typeof UsageQuery>;
