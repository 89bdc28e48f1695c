import { z } from "zod";
import { Id } from "@gateway/contract";

export const PushAliasParams = z.object({ alias: Id });
export type PushAliasParams = z.infer<typeof PushAliasParams>;

export const SendPushRequest = z.object({
  title: z.string().min(1).max(256),
  text: z.string().min(1).max(4096),
});
export type SendPushRequest = z.infer<typeof SendPushRequest>;

export const PushTargetResult = z.object({
  target_id: z.string(),
  ok: z.boolean(),
  status: z.number().int().nullable().describe("The target's HTTP status; null when no answer came."),
  error: z.string().nullable().describe("Why it was not delivered (`timeout`, `http_500`, `private_address`, `telegram_not_ok`, ...); null when delivered."),
});
export const SendPushResponse = z.object({
  data: z.object({ message_id: z.string(), results: z.array(PushTargetResult), charged_units: z.number().int() }),
});
