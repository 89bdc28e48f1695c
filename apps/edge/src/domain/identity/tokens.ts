import { createHash, randomBytes } from "node:crypto";
import jwt from "jsonwebtoken";

const ISSUER = "ai-gateway";
const AUDIENCE = "ai-gateway:session";

export type AccessClaims = { sub: string; sid: string };

export type TokenSettings = { secret: string; accessTtlSeconds: number; refreshTtlSeconds: number };

export function signAccessToken(claims: AccessClaims, settings: TokenSettings): string {
  return jwt.sign({ sid: claims.sid, typ: "access" }, settings.secret, {
    algorithm: "HS256",
    subject: claims.sub,
    issuer: ISSUER,
    audience: AUDIENCE,
    expiresIn: settings.accessTtlSeconds,
  });
}

/** The claims of a well-signed, unexpired access token, else null. */
export function verifyAccessToken(token: string, secret: string): AccessClaims | null {
  try {
    const payload = jwt.verify(token, secret, { algorithms: ["HS256"], issuer: ISSUER, audience: AUDIENCE });
    if (typeof payload === "string" || payload.typ !== "access" || typeof payload.sub !== "string" || typeof payload.sid !== "string") return null;
    return { sub: payload.sub, sid: payload.sid };
  } catch {
    return null;
  }
}

/** Opaque refresh tokens; only their SHA-256 is stored. */
export function newRefreshToken(): { token: string; hash: string } {
  const token = `rt_${randomBytes(32).toString("base64url")}`;
  return { token, hash: hashToken(token) };
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
