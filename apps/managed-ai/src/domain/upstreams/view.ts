import type { UpstreamRow } from "../ports.js";

export type { UpstreamRow };

/** An upstream as operators see it: never its credential, only whether one is set. */
export type UpstreamView = {
  id: string;
  provider: string;
  baseUrl: string;
  enabled: boolean;
  keyConfigured: boolean;
  version: number;
  createdAt: Date;
  updatedAt: Date;
};

/** A key id is stored exactly when a sealed key is (a CHECK constraint holds them together). */
export function upstreamView(row: UpstreamRow): UpstreamView {
  return {
    id: row.id,
    provider: row.provider,
    baseUrl: row.baseUrl,
    enabled: row.enabled,
    keyConfigured: row.apiKeyKeyId !== null,
    version: row.version,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** The audited state of an upstream (events carry no credential). */
export function upstreamState(view: UpstreamView) {
  return { provider: view.provider, base_url: view.baseUrl, enabled: view.enabled, key_configured: view.keyConfigured, version: view.version };
}
