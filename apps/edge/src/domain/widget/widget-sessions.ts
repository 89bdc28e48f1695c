import { AppError, isAppError } from "@gateway/errors";
import type { Broadcast } from "@gateway/events-runtime";
import type { Client } from "@gateway/grpc-kit";
import type { conversationsV1 } from "@gateway/protos";
import type { WidgetPrincipal } from "../principal.js";
import type { WidgetRateLimiter } from "./rate-limit.js";
import { signWidgetToken, verifyWidgetToken, type WidgetTokenSettings } from "./tokens.js";

/** Sent by messaging (and by the edge that revoked) when widget sessions end. */
export type WidgetSessionInvalidation = { session_ids: string[] };
export const WIDGET_SESSIONS_BROADCAST = "widget-sessions";

type Entry = { live: boolean; visitorId: string; conversationId: string; generation: number; expires: number };

/**
 * Verifies widget tokens and remembers whether their session is live, asking
 * the messaging service on a miss. A revocation (revoke, refresh-token reuse,
 * a chat ended) is broadcast over NATS to every replica, which forgets the
 * session at once; the TTL bounds staleness if a broadcast is missed.
 */
export class WidgetSessions {
  private readonly entries = new Map<string, Entry>();
  /** Counts drops, so a load that raced a revocation is not cached as live. */
  private drops = 0;

  constructor(
    private readonly options: {
      conversations: Pick<Client<typeof conversationsV1>, "GetWidgetSession">;
      tokens: WidgetTokenSettings;
      ttlMs: number;
      broadcast: Broadcast<WidgetSessionInvalidation>;
      maxEntries?: number;
      /** Requests per session and minute across replicas (visitors are anonymous: a token must not be a free firehose). */
      limiter?: WidgetRateLimiter;
    },
  ) {}

  listen(): void {
    this.options.broadcast.listen((message) => this.drop(message.session_ids ?? []));
  }

  get tokenTtlSeconds(): number {
    return this.options.tokens.ttlSeconds;
  }

  sign(claims: { sessionId: string; tenantId: string; chatId: string; generation: number }): string {
    return signWidgetToken({ sid: claims.sessionId, tid: claims.tenantId, cid: claims.chatId, gen: claims.generation }, this.options.tokens);
  }

  /** The principal of a valid widget token whose session is live, else null; 429 past the session's rate. */
  async authenticate(token: string): Promise<WidgetPrincipal | null> {
    const claims = verifyWidgetToken(token, this.options.tokens.secret);
    if (!claims) return null;
    const now = Date.now();
    let entry = this.entries.get(claims.sid);
    // A token newer than what is cached: the session was rotated since (a missed broadcast), so look again.
    if (!entry || entry.expires <= now || claims.gen > entry.generation) {
      const before = this.drops;
      entry = { ...(await this.load(claims.sid, claims.tid, claims.cid)), expires: now + this.options.ttlMs };
      if (this.entries.size >= (this.options.maxEntries ?? 100_000)) this.entries.clear();
      if (this.drops === before) this.entries.set(claims.sid, entry);
    }
    // The access token of an older pair: rotated away, refused like its refresh token.
    if (!entry.live || claims.gen !== entry.generation) return null;
    const waitMs = this.options.limiter ? await this.options.limiter.admit(claims.sid) : 0;
    if (waitMs > 0) {
      throw new AppError("rate_limited", "This chat session sends too many requests; try again shortly.", { retryAfter: Math.ceil(waitMs / 1000) });
    }
    return {
      kind: "widget",
      sessionId: claims.sid,
      tenantId: claims.tid,
      chatId: claims.cid,
      visitorId: entry.visitorId,
      conversationId: entry.conversationId || null,
      expiresAt: new Date(claims.exp * 1000),
    };
  }

  /** Forgets sessions here and on every replica; resolves once NATS has the message. */
  async invalidate(sessionIds: string[]): Promise<void> {
    this.drop(sessionIds);
    await this.options.broadcast.send({ session_ids: sessionIds });
  }

  private drop(sessionIds: string[]): void {
    this.drops += 1;
    for (const id of sessionIds) this.entries.delete(id);
  }

  private async load(sessionId: string, tenantId: string, chatId: string): Promise<Omit<Entry, "expires">> {
    try {
      const s = await this.options.conversations.GetWidgetSession({ session_id: sessionId });
      const live = !s.revoked && s.tenant_id === tenantId && s.chat_id === chatId;
      return { live, visitorId: s.visitor_id, conversationId: s.conversation_id, generation: s.generation };
    } catch (err) {
      if (isAppError(err) && err.code === "not_found") return { live: false, visitorId: "", conversationId: "", generation: -1 };
      throw err;
    }
  }
}
