import { deliver, type DeliveryResult } from "./deliver.js";
import type { EgressPolicy } from "./policy.js";
import { signBody } from "./signature.js";

export type SignedPost = {
  /** The exact bytes sent and signed. */
  body: string;
  /** Signs the body when set (push and reply targets may have none). */
  secret: string | null;
  /** `X-Service-Event-Id`: the body's `event_id`/`message_id`, unchanged across retries. */
  eventId: string;
  /** Any further headers (a user agent). */
  headers?: Record<string, string>;
  timeoutMs: number;
  policy: EgressPolicy;
  maxRedirects?: number;
};

/**
 * The one outbound signed webhook call (CONTRACT.md "Application services"): a
 * JSON `POST` with `X-Service-Event-Id` and, when there is a secret,
 * `X-Service-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>`, through
 * `deliver` (the egress policy checked on every hop and at connect). Never throws.
 */
export function postSigned(url: string, req: SignedPost): Promise<DeliveryResult> {
  const headers: Record<string, string> = { ...req.headers, "content-type": "application/json", "x-service-event-id": req.eventId };
  if (req.secret !== null) headers["x-service-signature"] = signBody(req.secret, req.body);
  return deliver(url, {
    method: "POST",
    body: req.body,
    headers,
    timeoutMs: req.timeoutMs,
    policy: req.policy,
    ...(req.maxRedirects !== undefined ? { maxRedirects: req.maxRedirects } : {}),
  });
}
