import type { PlatformRole, SessionAuthenticator, SessionPrincipal, TenantRole } from "../principal.js";
import type { PrismaClient } from "../../db.js";
import type { Broadcast } from "@gateway/events-runtime";
import { verifyAccessToken } from "./tokens.js";

type Entry = { principal: SessionPrincipal | null; expires: number };
export type SessionInvalidation = { session_id?: string; user_id?: string };

/**
 * Verifies access tokens and keeps the state of recently seen sessions in
 * memory, so a request costs a signature check and a map lookup. Revocations
 * and role changes clear the entry here at once and on every other edge
 * replica through a NATS broadcast; the TTL bounds staleness if one is missed.
 */
export class SessionCache implements SessionAuthenticator {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly options: {
      prisma: PrismaClient;
      secret: string;
      ttlMs: number;
      broadcast: Broadcast<SessionInvalidation>;
      maxEntries?: number;
    },
  ) {}

  /** Listens for invalidations from other replicas. */
  listen(): void {
    this.options.broadcast.listen((message) => this.drop(message));
  }

  async authenticate(token: string): Promise<SessionPrincipal | null> {
    const claims = verifyAccessToken(token, this.options.secret);
    if (!claims) return null;
    const now = Date.now();
    const cached = this.entries.get(claims.sid);
    if (cached && cached.expires > now) return cached.principal?.userId === claims.sub ? cached.principal : null;
    const principal = await this.load(claims.sid);
    if (this.entries.size >= (this.options.maxEntries ?? 100_000)) this.entries.clear();
    this.entries.set(claims.sid, { principal, expires: now + this.options.ttlMs });
    return principal?.userId === claims.sub ? principal : null;
  }

  /** Forgets the session or the user's sessions here and on every replica; resolves once NATS has the message. */
  async invalidate(target: SessionInvalidation): Promise<void> {
    this.drop(target);
    await this.options.broadcast.send(target);
  }

  private drop(target: SessionInvalidation): void {
    if (target.session_id) this.entries.delete(target.session_id);
    if (target.user_id) for (const [sid, entry] of this.entries) if (entry.principal?.userId === target.user_id) this.entries.delete(sid);
  }

  private async load(sessionId: string): Promise<SessionPrincipal | null> {
    const session = await this.options.prisma.session.findUnique({
      where: { id: sessionId },
      select: { revokedAt: true, user: { select: { id: true, tenantId: true, tenantRole: true, platformRole: true } } },
    });
    if (!session || session.revokedAt) return null;
    return {
      kind: "session",
      userId: session.user.id,
      sessionId,
      tenantId: session.user.tenantId,
      tenantRole: session.user.tenantRole as TenantRole,
      platformRole: session.user.platformRole as PlatformRole | null,
    };
  }
}
