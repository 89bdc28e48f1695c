// The inbox's sources, merged into one list (docs/decisions/0179): widget chats (bot chats,
// except those that are a conversation's channel), SocialOps threads of every socialops
// instance, and the conversation hub's conversations. Each source needs its own scope; a
// source the key may not read is reported, the others still show.
import type { ApiClient } from "../api.js";
import type { DataOf, ItemOf } from "../api-types.js";

type Auth = { kind: "apiKey"; key: string };

export type Chat = ItemOf<"GET /v1/apps/bot/chats">;
export type ChatMessage = ItemOf<"GET /v1/apps/bot/chats/{chatId}/messages">;
export type Thread = ItemOf<"GET /v1/apps/socialops/{alias}/inbox">;
export type SocialMessage = ItemOf<"GET /v1/apps/socialops/{alias}/threads/{thread_id}/messages">;
export type Delivery = NonNullable<SocialMessage["delivery"]>;
export type Conversation = ItemOf<"GET /v1/conversations/inbox">;
export type Participant = Conversation["participants"][number];
export type Channel = Conversation["channels"][number];
export type FeedEvent = DataOf<"GET /v1/apps/bot/widget/events">["events"][number];

export type Item =
  | { key: string; kind: "chat"; title: string; source: string; state: string; activity: string; unread: number; chat: Chat }
  | { key: string; kind: "thread"; title: string; source: string; state: string; activity: string; unread: number; alias: string; thread: Thread }
  | { key: string; kind: "conversation"; title: string; source: string; state: string; activity: string; unread: number; conversation: Conversation };

export type Sources = { items: Item[]; problems: { source: string; error: unknown }[]; sources: string[] };

/** The chat a conversation's messages live in: its first bot_chat channel. */
export const chatOf = (c: Conversation) => c.channels.find((ch) => ch.type === "bot_chat")?.ref ?? null;

const participantNames = (c: Conversation) =>
  c.participants
    .filter((p) => p.kind !== "agent")
    .map((p) => p.display_name ?? p.external_id)
    .join(", ");

export async function loadInbox(api: ApiClient, auth: Auth): Promise<Sources> {
  const problems: Sources["problems"] = [];
  const guard = async <T>(source: string, load: () => Promise<T>): Promise<T | null> => {
    try {
      return await load();
    } catch (error) {
      problems.push({ source, error });
      return null;
    }
  };
  const instances = await guard("instances", () => api.data<ItemOf<"GET /console/services">[]>("GET", "/console/services"));
  const aliases = (instances ?? []).filter((i) => i.service_id === "socialops").map((i) => i.alias);
  const [chats, conversations, ...threads] = await Promise.all([
    guard("widget chats", () => api.data<Chat[]>("GET", "/v1/apps/bot/chats?limit=100", { auth })),
    guard("conversations", () => api.data<Conversation[]>("GET", "/v1/conversations/inbox?limit=100", { auth })),
    ...aliases.map((alias) =>
      guard(`socialops:${alias}`, () => api.data<Thread[]>("GET", `/v1/apps/socialops/${encodeURIComponent(alias)}/inbox?limit=100`, { auth })),
    ),
  ]);
  const items: Item[] = [];
  for (const chat of chats ?? []) {
    if (chat.conversation_id && conversations?.some((c) => c.id === chat.conversation_id)) continue;
    items.push({
      key: `chat:${chat.id}`,
      kind: "chat",
      title: chat.display_name ?? chat.visitor_id,
      source: "widget",
      state: "open",
      activity: chat.last_message_at ?? chat.created_at,
      unread: 0,
      chat,
    });
  }
  for (const conversation of conversations ?? []) {
    items.push({
      key: `conversation:${conversation.id}`,
      kind: "conversation",
      title: conversation.subject ?? (participantNames(conversation) || conversation.id),
      source: "conversations",
      state: conversation.status,
      activity: conversation.last_activity_at,
      unread: 0,
      conversation,
    });
  }
  aliases.forEach((alias, i) => {
    for (const thread of threads[i] ?? [])
      items.push({
        key: `thread:${alias}:${thread.id}`,
        kind: "thread",
        title: thread.subject,
        source: `socialops:${alias}`,
        state: "open",
        activity: thread.last_activity_at,
        unread: thread.unread_count,
        alias,
        thread,
      });
  });
  items.sort((a, b) => b.activity.localeCompare(a.activity));
  return { items, problems, sources: ["widget", "conversations", ...aliases.map((a) => `socialops:${a}`)] };
}

/** Every message of a chat, oldest first (pages of 100 with `after`). */
export async function chatMessages(api: ApiClient, auth: Auth, chatId: string): Promise<ChatMessage[]> {
  const all: ChatMessage[] = [];
  for (let after = ""; ; ) {
    const page = await api.data<ChatMessage[]>("GET", `/v1/apps/bot/chats/${encodeURIComponent(chatId)}/messages?limit=100${after ? `&after=${after}` : ""}`, {
      auth,
    });
    all.push(...page);
    if (page.length < 100) return all;
    after = page[page.length - 1]!.id;
  }
}

/**
 * Follows the tenant's widget feed (every chat's messages, conversation channels included)
 * from its head. Positions are dense and become visible in order (decision 0121), so the
 * head is found with a handful of one-event probes (doubling, then halving) instead of
 * reading the whole feed; later calls return what arrived after it. A full page is
 * followed at once; at the head the caller waits.
 */
export class FeedFollower {
  private cursor: string | null = null;

  constructor(
    private readonly api: ApiClient,
    private readonly auth: Auth,
  ) {}

  private page(cursor: string, limit: number) {
    return this.api.data<DataOf<"GET /v1/apps/bot/widget/events">>(
      "GET",
      `/v1/apps/bot/widget/events?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      {
        auth: this.auth,
      },
    );
  }

  /** The position of the newest event (0 for an empty feed). */
  async head(): Promise<number> {
    const after = async (n: number) => (await this.page(n === 0 ? "" : String(n), 1)).events.length > 0;
    if (!(await after(0))) return 0;
    let lo = 0; // there are events after lo
    let hi = 1;
    while (await after(hi)) {
      lo = hi;
      hi *= 2;
    }
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (await after(mid)) lo = mid;
      else hi = mid;
    }
    return hi;
  }

  async next(): Promise<{ events: FeedEvent[]; more: boolean }> {
    if (this.cursor === null) {
      const head = await this.head();
      this.cursor = head === 0 ? "" : String(head);
      return { events: [], more: false };
    }
    const page = await this.page(this.cursor, 100);
    this.cursor = page.next_cursor;
    return { events: page.events, more: page.events.length === 100 };
  }
}
