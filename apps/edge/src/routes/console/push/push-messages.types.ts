import { z } from "zod";
import { Id, listLimitQuery } from "@gateway/contract";

/** The delivery log of a webhook-push instance (the console's push page). */
export const PushMessagesParams = z.object({ alias: Id });
export type PushMessagesParams = z.infer<typeof PushMessagesParams>;

export const PushMessagesQuery = z.strictObject({
  limit: listLimitQuery(100).describe("1..100, default 50."),
  before: Id.optional().describe("Continue after this message id (the last one of the previous page)."),
});
export type PushMessagesQuery = z.infer<typeof PushMessagesQuery>;

export const PushDeliveryView = z.object({
  target_id: z.string(),
  type: z.enum(["webhook", "telegram"]),
  ok: z.boolean().nullable().describe("null while the outcome is unknown."),
  status: z.number().int().nullable().describe("The target's HTTP status; null when no answer came."),
  error: z.string().nullable().describe("Why it was not delivered (`timeout`, `http_500`, ...); null when delivered."),
  finished_at: z.string().nullable(),
});

export const PushMessageView = z.object({
  id: z.string(),
  status: z.enum(["sending", "delivered", "partial", "failed"]),
  charged_units: z.number().int(),
  created_at: z.string(),
  settled_at: z.string().nullable(),
  deliveries: z.array(PushDeliveryView).describe("The enabled targets of the send, in target order (no title or text is kept in the log)."),
});

export const PushMessagesResponse = z.object({ data: z.array(PushMessageView) });
