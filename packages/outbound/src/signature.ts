import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The one signing scheme of job callbacks, push webhooks and conversation
 * webhooks: `sha256=<hex HMAC-SHA256(secret, raw body)>`, over the exact bytes sent.
 */
export function signBody(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** Checks an `X-Service-Signature` header in constant time. */
export function verifySignature(secret: string, body: string | Uint8Array, header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
