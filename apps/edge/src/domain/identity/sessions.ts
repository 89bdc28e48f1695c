import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import type { Tx } from "../../db.js";
import type { IdentityContext } from "./context.js";
import { decoyHash, verifyPassword } from "./passwords.js";
import { hashToken, newRefreshToken, signAccessToken } from "./tokens.js";

export type TokenPair = { token: string; refresh_token: string; token_type: "Bearer"; expires_in: number };

const WRONG_CREDENTIALS = "The email or password is wrong.";

async function issueRefreshToken(tx: Tx, sessionId: string, ttlSeconds: number): Promise<string> {
  const { token, hash } = newRefreshToken();
  await tx.refreshToken.create({ data: { hash, sessionId, expiresAt: new Date(Date.now() + ttlSeconds * 1000) } });
  return token;
}

function pair(ctx: IdentityContext, userId: string, sessionId: string, refreshToken: string): TokenPair {
  return {
    token: signAccessToken({ sub: userId, sid: sessionId }, ctx.tokens),
    refresh_token: refreshToken,
    token_type: "Bearer",
    expires_in: ctx.tokens.accessTtlSeconds,
  };
}

/**
 * Same answer, and about the same time, for an unknown email and a wrong
 * password: both run scrypt (against a decoy hash when the email is unknown),
 * both count as a failure of that email. The limits are checked first, so a
 * refused attempt costs no database read and no scrypt run.
 */
export async function login({ ctx, input }: { ctx: IdentityContext; input: { email: string; password: string; address: string } }): Promise<TokenPair> {
  const email = input.email.trim().toLowerCase();
  await ctx.attempts.admitSignIn(input.address, email);
  const user = await ctx.prisma.user.findUnique({ where: { email } });
  const ok = await verifyPassword(input.password, user?.passwordHash ?? (await decoyHash()));
  if (!user || !ok) {
    await ctx.attempts.failed(email);
    throw new AppError("unauthorized", WRONG_CREDENTIALS);
  }
  await ctx.attempts.succeeded(email);
  const sessionId = newId("ses");
  const refreshToken = await ctx.transact(async (tx) => {
    await tx.session.create({ data: { id: sessionId, userId: user.id } });
    return issueRefreshToken(tx, sessionId, ctx.tokens.refreshTtlSeconds);
  });
  return pair(ctx, user.id, sessionId, refreshToken);
}

/**
 * Rotates a refresh token. The token's row is locked, so of two concurrent
 * uses exactly one rotates; a token presented after its use is reuse: the
 * whole session is revoked (its access tokens stop working too) and the answer is 401.
 */
export async function refresh({ ctx, input }: { ctx: IdentityContext; input: { refreshToken: string } }): Promise<TokenPair> {
  const hash = hashToken(input.refreshToken);
  const outcome = await ctx.transact(async (tx, emit) => {
    const rows = await tx.$queryRawUnsafe<{ session_id: string; used_at: Date | null; expires_at: Date }[]>(
      "SELECT session_id, used_at, expires_at FROM refresh_tokens WHERE hash = $1 FOR UPDATE",
      hash,
    );
    const row = rows[0];
    if (!row) return { kind: "invalid" as const };
    const session = await tx.session.findUniqueOrThrow({ where: { id: row.session_id } });
    if (session.revokedAt) return { kind: "invalid" as const };
    if (row.used_at) {
      await tx.session.update({ where: { id: session.id }, data: { revokedAt: new Date(), revokedReason: "refresh_reuse" } });
      await emit("identity.session_revoked", { session_id: session.id, user_id: session.userId, reason: "refresh_reuse" });
      return { kind: "reused" as const, sessionId: session.id };
    }
    if (row.expires_at.getTime() <= Date.now()) return { kind: "invalid" as const };
    await tx.refreshToken.update({ where: { hash }, data: { usedAt: new Date() } });
    const next = await issueRefreshToken(tx, session.id, ctx.tokens.refreshTtlSeconds);
    return { kind: "rotated" as const, userId: session.userId, sessionId: session.id, refreshToken: next };
  });
  if (outcome.kind === "reused") {
    await ctx.sessions.invalidate({ session_id: outcome.sessionId });
    throw new AppError("unauthorized", "This refresh token was already used; the session has been signed out.");
  }
  if (outcome.kind === "invalid") throw new AppError("unauthorized", "The refresh token is invalid or expired.");
  return pair(ctx, outcome.userId, outcome.sessionId, outcome.refreshToken);
}

/** Ends the session: its access and refresh tokens stop working at once. */
export async function logout({ ctx, input }: { ctx: IdentityContext; input: { sessionId: string; userId: string } }): Promise<void> {
  await ctx.transact(async (tx, emit) => {
    const revoked = await tx.session.updateMany({
      where: { id: input.sessionId, revokedAt: null },
      data: { revokedAt: new Date(), revokedReason: "logout" },
    });
    if (revoked.count > 0) await emit("identity.session_revoked", { session_id: input.sessionId, user_id: input.userId, reason: "logout" });
  });
  await ctx.sessions.invalidate({ session_id: input.sessionId });
}
