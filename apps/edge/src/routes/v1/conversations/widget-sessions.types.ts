import { z } from "zod";
import { ExternalId, listLimitQuery } from "@gateway/contract";
import { DisplayName } from "../bot/widget.types.js";

export const WidgetSessionsQuery = z.strictObject({ limit: listLimitQuery(100).describe("Default 50.") });
export type WidgetSessionsQuery = z.infer<typeof WidgetSessionsQuery>;

export const WidgetSessionView = z.object({
  id: z.string(),
  chat_id: z.string(),
  visitor_id: z.string(),
  display_name: z.string().nullable(),
  status: z.enum(["live", "ended"]).describe("live until revoked, ended by a refresh token's reuse, or by the chat's `end` action."),
  ended_at: z.string().nullable(),
  ended_reason: z.enum(["revoked", "refresh_reuse", "chat_ended"]).nullable(),
  created_at: z.string(),
});

export const WidgetSessionRequest = z.strictObject({ visitor_id: ExternalId, display_name: DisplayName.optional() });
export type WidgetSessionRequest = z.infer<typeof WidgetSessionRequest>;
