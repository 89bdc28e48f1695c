import { AppError } from "@gateway/errors";
import { openCredential, sealCredential, type Keyring, type SealedCredential } from "@gateway/secrets";
import { checkUrl, egressPolicy, type EgressPolicy } from "@gateway/outbound";

/** How callbacks are sent (the environment's settings). */
export type CallbackSettings = {
  allowHttpLoopback: boolean;
  baseDelayMs: number;
  timeoutMs: number;
};

export const SECRET_MIN = 16;
export const SECRET_MAX = 256;

/**
 * HTTPS only, no credentials in the URL; plain HTTP to a loopback address only
 * with CALLBACK_ALLOW_HTTP_LOOPBACK (the one egress policy, docs/decisions/0204).
 * Private addresses are refused at write and again at every delivery.
 */
export function callbackPolicy(settings: Pick<CallbackSettings, "allowHttpLoopback">): EgressPolicy {
  return egressPolicy({ requireHttps: true, refuseCredentials: true, allowHttpLoopback: settings.allowHttpLoopback });
}

/** The associated data binding a sealed callback secret to its job. */
export const callbackSecretContext = (jobId: string) => `gateway.jobs.callback_secret:${jobId}`;

/** Reasons of `checkUrl` that are about the URL's form rather than where it leads. */
const FORM_PROBLEMS: Record<string, string> = {
  invalid_url: "not a URL",
  unsupported_scheme: "not http(s)",
  https_required: "plain http",
  credentials_in_url: "credentials in the URL",
};

/**
 * Validates a lease's callback fields (400 on any problem): a URL the policy
 * allows and a secret of 16..256 characters whenever a URL is given. A host
 * that resolves to a private, loopback or link-local address is refused here;
 * one that does not resolve now is stored, since every delivery resolves the
 * name again and refuses such an address at connect time.
 */
export async function checkCallback(settings: CallbackSettings, url: string, secret: string): Promise<{ url: string; secret: string } | null> {
  if (!url) {
    if (secret) throw new AppError("invalid_request", "callback_secret is only meaningful with a callback_url.");
    return null;
  }
  if (url.length > 2048) throw new AppError("invalid_request", "callback_url must be at most 2048 characters.");
  const reached = await checkUrl(url, callbackPolicy(settings));
  if (!reached.ok && FORM_PROBLEMS[reached.reason])
    throw new AppError("invalid_request", `callback_url must be an HTTPS URL (${FORM_PROBLEMS[reached.reason]}).`);
  if (!reached.ok && reached.reason !== "dns_failed")
    throw new AppError("invalid_request", `callback_url must not reach a private, loopback or link-local address (${reached.reason}).`);
  if (!secret) throw new AppError("invalid_request", "callback_secret is required with a callback_url.");
  if (secret.length < SECRET_MIN || secret.length > SECRET_MAX)
    throw new AppError("invalid_request", `callback_secret must be ${SECRET_MIN} to ${SECRET_MAX} characters.`);
  return { url, secret };
}

/** A sealed secret as jobs stores it (callback targets and account webhooks alike): two columns. */
export function secretColumns<C extends Uint8Array>(sealed: { ciphertext: C; keyId: string }): { secretCiphertext: C; secretKeyId: string } {
  return { secretCiphertext: sealed.ciphertext, secretKeyId: sealed.keyId };
}

/** The sealed secret a row's two columns hold (for opening or sealing again). */
export function sealedIn<C extends Uint8Array>(row: { secretCiphertext: C; secretKeyId: string }): { ciphertext: C; keyId: string } {
  return { ciphertext: row.secretCiphertext, keyId: row.secretKeyId };
}

export function sealCallbackSecret(keyring: Keyring, jobId: string, secret: string): SealedCredential {
  return sealCredential(keyring, secret, callbackSecretContext(jobId));
}

export function openCallbackSecret(keyring: Keyring, jobId: string, sealed: { ciphertext: Uint8Array; keyId: string }): string {
  return openCredential(keyring, sealed, callbackSecretContext(jobId));
}
