import { createHash, randomBytes } from "node:crypto";

/** Opaque widget refresh tokens (`wrt_…`); only their SHA-256 is stored. */
export function newWidgetRefreshToken(): { token: string; hash: string } {
  const token = `wrt_${randomBytes(32).toString("base64url")}`;
  return { token, hash: hashToken(token) };
}

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
