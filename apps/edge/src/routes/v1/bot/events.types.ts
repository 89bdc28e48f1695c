import { z } from "zod";
import { cursorPageQuery } from "@gateway/contract";

/** The feeds' events, as the widget and the conversation hub page through them (docs/decisions/0121, 0202). */

export const EventView = z.object({
  id: z.string().describe("Stable event id (also X-Service-Event-Id of webhook deliveries)."),
  cursor: z.string().describe("This event's position; pass it as `cursor` to continue after it."),
  type: z.string(),
  chat_id: z.string().nullable(),
  conversation_id: z.string().nullable(),
  data: z.unknown(),
  created_at: z.string(),
});
export const EventsQuery = cursorPageQuery({ max: 100, item: "event" });
export type EventsQuery = z.infer<typeof EventsQuery>;
export const EventsPage = z.object({ data: z.object({ events: z.array(EventView), next_cursor: z.string() }) });
