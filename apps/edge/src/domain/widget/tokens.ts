import { randomUUID } from "node:crypto";
import jwt from "jsonwebtoken";

/**
 * Widget access tokens: HS256 JWTs under their own secret (WIDGET_JWT_SECRET)
 * and audience, with `typ: "widget"`. A session token does not verify here, and
 * a widget token verifies nowhere else (docs/decisions/0120). Every token is
 * distinct (`jti`), and carries its session's generation (`gen`), bumped by each
 * refresh: only the current generation is accepted (`WidgetSessions`).
 */
const ISSUER = "ai-gateway";
export const WIDGET_AUDIENCE = "ai-gateway:widget";

export type WidgetClaims = { sid: string; tid: string; cid: string; gen: number };
export type WidgetTokenSettings = { secret: string; ttlSeconds: number };

export function signWidgetToken(claims: WidgetClaims, settings: WidgetTokenSettings): string {
  return jwt.sign({ tid: claims.tid, cid: claims.cid, gen: claims.gen, typ: "widget" }, settings.secret, {
    algorithm: "HS256",
    jwtid: randomUUID(),
    subject: claims.sid,
    issuer: ISSUER,
    audience: WIDGET_AUDIENCE,
    expiresIn: settings.ttlSeconds,
  });
}

/** The claims of a well-signed, unexpired widget token, else null. */
export function verifyWidgetToken(token: string, secret: string): (WidgetClaims & { exp: number; jti: string }) | null {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ["HS256"], issuer: ISSUER, audience: WIDGET_AUDIENCE });
    if (typeof payload === "string" || payload.typ !== "widget") return null;
    const { sub, tid, cid, exp, gen, jti } = payload;
    if (typeof sub !== "string" || typeof tid !== "string" || typeof cid !== "string" || typeof exp !== "number") return null;
    if (typeof gen !== "number" || !Number.isSafeInteger(gen) || gen < 0 || typeof jti !== "string") return null;
    return { sid: sub, tid, cid, exp, gen, jti };
  } catch {
    return null;
  }
}
