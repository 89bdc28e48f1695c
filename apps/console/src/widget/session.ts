// The widget's talk with the gateway: a session obtained by the host page's own server
// (which holds the API key), a short-lived widget token refreshed before it expires,
// and the visitor's chat read from the widget feed with its cursor. No dependencies.

import type { DataOf, ItemOf } from "../api-types.js";

/** What the widget needs of a grant (the host page's server may pass on just these). */
export type Grant = Pick<DataOf<"POST /v1/apps/bot/widget/refresh">, "token" | "refresh_token" | "expires_in" | "chat_id">;
export type WidgetMessage = Pick<ItemOf<"GET /v1/apps/bot/widget/messages">, "id" | "author" | "kind" | "text" | "deleted" | "created_at">;
type FeedEvent = Pick<DataOf<"GET /v1/apps/bot/widget/events">["events"][number], "cursor" | "type" | "data">;

export type SessionOptions = {
  /** The gateway's origin (where widget.js came from). */
  gateway: string;
  /** The host page's own endpoint that opens a widget session with its API key. */
  sessionUrl: string;
  storage: { local: Storage; session: Storage };
  fetchImpl?: typeof fetch;
  onMessages: (messages: WidgetMessage[]) => void;
  onTyping?: () => void;
  onState?: (state: "connecting" | "ready" | "offline") => void;
};

/** Poll the feed this often at its head; a full page is followed at once. */
export const POLL_MS = 2000;
const PAGE = 100;
/** After a failed start, try again this much later. */
export const RETRY_MS = 10_000;

const randomId = () => {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `v_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
};

export class WidgetSession {
  private grant: Grant | null = null;
  private cursor = "";
  private readonly messages = new Map<string, WidgetMessage>();
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private renewing: Promise<void> | null = null;
  private readonly fetch: typeof fetch;
  private readonly keys: { visitor: string; session: string };

  constructor(private readonly o: SessionOptions) {
    this.fetch = o.fetchImpl ?? ((...args) => fetch(...args));
    this.keys = { visitor: `gw-widget:${o.gateway}:visitor`, session: `gw-widget:${o.gateway}:session` };
  }

  /** A stable id for this browser (kept across reloads and tabs). */
  get visitorId(): string {
    let id = this.o.storage.local.getItem(this.keys.visitor);
    if (!id) {
      id = randomId();
      this.o.storage.local.setItem(this.keys.visitor, id);
    }
    return id;
  }

  /** Connects, and keeps trying every RETRY_MS while the page's server or the gateway cannot be reached. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch {
      this.o.onState?.("offline");
      if (!this.stopped) this.pollTimer = setTimeout(() => void this.start(), RETRY_MS);
    }
  }

  private async connect(): Promise<void> {
    this.o.onState?.("connecting");
    const saved = this.load();
    if (saved?.refresh_token) {
      this.cursor = saved.cursor ?? "";
      await this.refresh(saved.refresh_token).catch(() => undefined);
    }
    if (!this.grant) await this.open();
    if (!this.cursor) await this.drainToHead();
    await this.loadHistory();
    this.o.onState?.("ready");
    this.schedulePoll(0);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.refreshTimer);
    clearTimeout(this.pollTimer);
  }

  async send(text: string): Promise<void> {
    const res = await this.call("POST", "/v1/apps/bot/widget/messages", { text });
    const message = (res as { data: WidgetMessage }).data;
    this.apply(message);
  }

  /** A new session from the host page's server (same visitor, so the same chat). */
  private async open(): Promise<void> {
    const res = await this.fetch(this.o.sessionUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      credentials: "same-origin",
      body: JSON.stringify({ visitor_id: this.visitorId }),
    });
    if (!res.ok) throw new Error(`the session endpoint answered ${res.status}`);
    const body = (await res.json()) as Grant | { data: Grant };
    this.setGrant("data" in body ? body.data : body);
  }

  private async refresh(refreshToken: string): Promise<void> {
    const res = await this.fetch(`${this.o.gateway}/v1/apps/bot/widget/refresh`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ refresh_token: refreshToken }),
    });
    if (res.status !== 200) throw new Error(`refresh answered ${res.status}`);
    this.setGrant(((await res.json()) as { data: Grant }).data);
  }

  private setGrant(grant: Grant): void {
    if (this.grant && this.grant.chat_id !== grant.chat_id) {
      this.messages.clear();
      this.cursor = "";
    }
    this.grant = grant;
    this.save();
    clearTimeout(this.refreshTimer);
    // A minute before expiry (tokens live 30 s to 15 minutes); halfway for short ones.
    const inMs = (grant.expires_in > 120 ? grant.expires_in - 60 : Math.max(5, grant.expires_in / 2)) * 1000;
    this.refreshTimer = setTimeout(() => void this.renew(), inMs);
  }

  /** One renewal at a time: a refresh token works once, so two at once would end the session. */
  private renew(): Promise<void> {
    this.renewing ??= this.renewOnce().finally(() => {
      this.renewing = null;
    });
    return this.renewing;
  }

  /** Refresh the pair; a refused refresh (reused, revoked) falls back to a new session. */
  private async renewOnce(): Promise<void> {
    if (this.stopped) return;
    const current = this.grant;
    try {
      if (!current) throw new Error("no session");
      await this.refresh(current.refresh_token);
    } catch {
      this.grant = null;
      await this.open().catch(() => this.o.onState?.("offline"));
    }
  }

  private async call(method: string, path: string, body?: unknown, retried = false): Promise<unknown> {
    if (!this.grant) await this.renew();
    const res = await this.fetch(`${this.o.gateway}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.grant?.token ?? ""}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (res.status === 401 && !retried) {
      await this.renew();
      return this.call(method, path, body, true);
    }
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}`);
    return res.json();
  }

  private async eventsPage(): Promise<FeedEvent[]> {
    const page = (await this.call("GET", `/v1/apps/bot/widget/events?limit=${PAGE}${this.cursor ? `&cursor=${encodeURIComponent(this.cursor)}` : ""}`)) as {
      data: { events: FeedEvent[]; next_cursor: string };
    };
    this.cursor = page.data.next_cursor;
    this.save();
    return page.data.events;
  }

  /** A first visit starts at the feed's head; the history comes from the message list. */
  private async drainToHead(): Promise<void> {
    for (;;) if ((await this.eventsPage()).length < PAGE) return;
  }

  private async loadHistory(): Promise<void> {
    let after = "";
    for (;;) {
      const page = (await this.call("GET", `/v1/apps/bot/widget/messages?limit=${PAGE}${after ? `&after=${after}` : ""}`)) as { data: WidgetMessage[] };
      for (const m of page.data) this.messages.set(m.id, m);
      if (page.data.length < PAGE) break;
      after = page.data[page.data.length - 1]!.id;
    }
    this.emit();
  }

  private schedulePoll(ms: number): void {
    if (this.stopped) return;
    this.pollTimer = setTimeout(() => void this.poll(), ms);
  }

  private async poll(): Promise<void> {
    let full = false;
    try {
      const events = await this.eventsPage();
      full = events.length === PAGE;
      for (const e of events) {
        if (e.type.startsWith("message.")) this.apply(e.data as WidgetMessage);
        else if (e.type === "chat.action" && (e.data as { action?: string }).action === "typing") this.o.onTyping?.();
      }
      this.o.onState?.("ready");
    } catch {
      this.o.onState?.("offline");
    }
    this.schedulePoll(full ? 0 : POLL_MS);
  }

  private apply(message: WidgetMessage): void {
    this.messages.set(message.id, message);
    this.emit();
  }

  private emit(): void {
    const list = [...this.messages.values()].sort((a, b) =>
      a.created_at === b.created_at ? a.id.localeCompare(b.id) : a.created_at.localeCompare(b.created_at),
    );
    this.o.onMessages(list);
  }

  // The refresh token and cursor live in sessionStorage (this tab: a reload keeps them, and
  // two tabs never present the same one-use refresh token); the visitor id in localStorage.
  private load(): { refresh_token?: string; cursor?: string } | null {
    try {
      return JSON.parse(this.o.storage.session.getItem(this.keys.session) ?? "null") as { refresh_token?: string; cursor?: string } | null;
    } catch {
      return null;
    }
  }

  private save(): void {
    this.o.storage.session.setItem(this.keys.session, JSON.stringify({ refresh_token: this.grant?.refresh_token, cursor: this.cursor }));
  }
}
