// Sealing lives in @gateway/secrets (shared with messaging); the domain names its own contexts (the associated data).
export { CredentialError, openCredential, sealCredential, type Keyring, type SealedCredential } from "@gateway/secrets";

/** The associated data of an upstream's API key. */
export function upstreamKeyContext(upstreamId: string): string {
  return `gateway.managed_ai.upstream.api_key:${upstreamId}`;
}

/** The associated data of a bring-your-own-key instance's inline API key. */
export function instanceKeyContext(instanceId: string): string {
  return `gateway.managed_ai.instance.api_key:${instanceId}`;
}

/** The associated data of a connected account's secret. */
export function connectedAccountContext(accountId: string): string {
  return `gateway.managed_ai.connected_account.secret:${accountId}`;
}
