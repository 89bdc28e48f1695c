import { hash, timingSafeEqual } from "node:crypto";
import { Metadata, status as GrpcStatus, type StatusObject } from "@grpc/grpc-js";
import { METADATA } from "./status.js";

/**
 * Service-call authentication (docs/decisions/0183): every call between the
 * gateway's processes carries the shared service token as metadata, and every
 * server checks it before any handler runs. Only the standard health service
 * stays open (orchestrator probes cannot send metadata; it tells nothing but
 * SERVING / NOT_SERVING).
 */
export const SERVICE_TOKEN_METADATA = "x-service-token";

/** The shortest token a server or client accepts. */
export const MIN_SERVICE_TOKEN_LENGTH = 32;

export function assertServiceToken(token: string, who: string): void {
  if (typeof token !== "string" || token.length < MIN_SERVICE_TOKEN_LENGTH) {
    throw new Error(`${who}: the service token must be at least ${MIN_SERVICE_TOKEN_LENGTH} characters`);
  }
}

/**
 * SHA-256 as 64 hex characters in a Buffer. The one-shot `hash()` with a string
 * result costs about a third of `createHash().update().digest()` (no Hash object,
 * no Buffer made by the binding), and every call to every server pays it.
 */
const digest = (value: string) => Buffer.from(hash("sha256", value, "hex"), "latin1");

/**
 * Checks a call's metadata against the expected token in constant time (both
 * sides are hashed first, so neither the content nor the length leaks through
 * timing). A missing token, several tokens, or a binary one are all refusals.
 */
export class ServiceTokenCheck {
  private readonly expected: Buffer;

  constructor(token: string) {
    assertServiceToken(token, "GrpcServer");
    this.expected = digest(token);
  }

  accepts(metadata: Metadata): boolean {
    const values = metadata.get(SERVICE_TOKEN_METADATA);
    const presented = values.length === 1 && typeof values[0] === "string" ? values[0] : "";
    // Always compare, even when nothing was presented: the same work either way.
    const same = timingSafeEqual(digest(presented), this.expected);
    return same && presented.length > 0;
  }
}

/**
 * The status of a refused call: UNAUTHENTICATED on the wire; for the caller's
 * error pipeline it is `unavailable` (a caller whose token is wrong is
 * misconfigured: its own clients get 503, not a 401 about their credentials).
 */
export function unauthenticatedStatus(): Partial<StatusObject> {
  const metadata = new Metadata();
  metadata.set(METADATA.errorCode, "unavailable");
  return {
    code: GrpcStatus.UNAUTHENTICATED,
    details: "The service token is missing or wrong: every service needs the same SERVICE_TOKEN.",
    metadata,
  };
}
