import { z } from "zod";
import { ExternalId, Id } from "@gateway/contract";

/** The widget's session: its sign-in, refresh and token (docs/decisions/0122). */

const OptionalId = Id.optional();
export const DisplayName = z.string().trim().min(1).max(128);

export const WidgetAuthRequest = z.strictObject({
  visitor_id: ExternalId.describe("Your stable id for the visitor; the same visitor gets the same chat back."),
  display_name: DisplayName.optional(),
  bot_id: OptionalId.describe("The bot the chat is with (optional)."),
});
export type WidgetAuthRequest = z.infer<typeof WidgetAuthRequest>;
export const WidgetGrantView = z.object({
  token: z.string().describe("Widget access token (JWT, at most 15 minutes); only widget routes accept it. Send as Authorization: Bearer."),
  refresh_token: z.string().describe("One use only; presenting a used one ends the session."),
  token_type: z.literal("Bearer"),
  expires_in: z.number().int(),
  chat_id: z.string(),
  session_id: z.string(),
  conversation_id: z.string().nullable(),
});
export const WidgetRefreshRequest = z.strictObject({ refresh_token: z.string().min(1).max(512) });
export type WidgetRefreshRequest = z.infer<typeof WidgetRefreshRequest>;
export const WidgetTokenView = z.object({
  session_id: z.string(),
  chat_id: z.string(),
  visitor_id: z.string(),
  conversation_id: z.string().nullable(),
  expires_at: z.string().describe("When this access token expires."),
});
