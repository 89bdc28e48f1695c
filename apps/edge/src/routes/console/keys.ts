import type { EdgeDeps } from "../../deps.js";
import { createKey, listKeys, revokeKey, rotateKey } from "../../domain/keys/manage-keys.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { CreateKeyRequest, KeyListResponse, KeyParams, KeyWithSecretResponse } from "./keys.types.js";

const admin = { kind: "tenant", minRole: "admin" } as const;

export const postKey = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, CreateKeyRequest>({
  method: "post",
  path: "/console/keys",
  summary: "Create an API key with its policy. The plaintext key is in this answer only.",
  tags: ["console", "keys"],
  access: admin,
  body: CreateKeyRequest,
  responses: { 201: { description: "created", schema: KeyWithSecretResponse } },
  async handler({ deps, body, principal }) {
    const me = sessionPrincipal(principal);
    const data = await createKey({
      ctx: deps.keys,
      input: {
        tenantId: me.tenantId,
        actor: `user:${me.userId}`,
        name: body.name ?? "API key",
        scopes: body.scopes ?? [],
        serviceAliases: body.service_aliases ?? [],
        allowedIps: body.allowed_ips ?? [],
        dailyQuota: body.daily_quota ?? null,
        rateLimitPerMinute: body.rate_limit_per_minute ?? null,
        concurrencyLimit: body.concurrency_limit ?? null,
        expiresAt: body.expires_at ? new Date(body.expires_at) : null,
      },
    });
    return { status: 201, body: { data } };
  },
});

export const getKeys = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/keys",
  summary: "The tenant's live API keys, newest first, without secrets.",
  tags: ["console", "keys"],
  access: admin,
  responses: { 200: { description: "keys", schema: KeyListResponse } },
  async handler({ deps, principal }) {
    return { status: 200, body: { data: await listKeys({ ctx: deps.keys, input: { tenantId: sessionPrincipal(principal).tenantId } }) } };
  },
});

export const postKeyRotate = defineRoute<EdgeDeps, KeyParams>({
  method: "post",
  path: "/console/keys/:id/rotate",
  summary: "Replace the key's secret; the old one fails at once on every replica.",
  tags: ["console", "keys"],
  access: admin,
  params: KeyParams,
  responses: { 200: { description: "rotated", schema: KeyWithSecretResponse }, 404: { description: "no such key" } },
  async handler({ deps, params, principal }) {
    const me = sessionPrincipal(principal);
    const data = await rotateKey({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id, actor: `user:${me.userId}` } });
    return { status: 200, body: { data } };
  },
});

export const deleteKey = defineRoute<EdgeDeps, KeyParams>({
  method: "delete",
  path: "/console/keys/:id",
  summary: "Revoke the key; it fails at once on every replica.",
  tags: ["console", "keys"],
  access: admin,
  params: KeyParams,
  responses: { 204: { description: "revoked" }, 404: { description: "no such key" } },
  async handler({ deps, params, principal }) {
    const me = sessionPrincipal(principal);
    await revokeKey({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id, actor: `user:${me.userId}` } });
    return { status: 204 };
  },
});
