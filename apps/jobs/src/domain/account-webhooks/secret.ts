import { randomBytes } from "node:crypto";
import { openCredential, sealCredential, type Keyring, type SealedCredential } from "@gateway/secrets";

/** The associated data binding a sealed webhook secret to its webhook. */
export const webhookSecretContext = (webhookId: string) => `gateway.jobs.account_webhook_secret:${webhookId}`;

/** A new signing secret: `whsec_` and 32 random bytes (base64url). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}

export function sealWebhookSecret(keyring: Keyring, webhookId: string, secret: string): SealedCredential {
  return sealCredential(keyring, secret, webhookSecretContext(webhookId));
}

export function openWebhookSecret(keyring: Keyring, webhookId: string, sealed: { ciphertext: Uint8Array; keyId: string }): string {
  return openCredential(keyring, sealed, webhookSecretContext(webhookId));
}
