import { pageRequested } from "@gateway/contract";
import type { EdgeDeps } from "../../deps.js";
import { createKey, getKey, listKeys, revokeKey, rotateKey, updateKeyBudget } from "../../domain/keys/manage-keys.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { withFreshBudget, withKeyBudgets } from "./key-budgets.js";
import { pageArgs, pageBody } from "../page.js";
import { CreateKeyRequest, KeyListQuery, KeyListResponse, KeyParams, KeyResponse, KeyWithSecretResponse, UpdateKeyRequest } from "./keys.types.js";

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
        budget: body.budget_units !== undefined && body.budget_period !== undefined ? { units: BigInt(body.budget_units), period: body.budget_period } : null,
      },
    });
    deps.keys.expiryNotices?.keyCreated(data.expires_at ? new Date(data.expires_at) : null);
    return { status: 201, body: { data: withFreshBudget(data) } };
  },
});

export const getKeys = defineRoute<EdgeDeps, Record<string, never>, KeyListQuery>({
  method: "get",
  path: "/console/keys",
  summary: "The tenant's live API keys, newest first, without secrets: the newest 200, or a page at a time with `limit` and `cursor`.",
  tags: ["console", "keys"],
  access: admin,
  query: KeyListQuery,
  responses: { 200: { description: "keys", schema: KeyListResponse } },
  async handler({ deps, query, principal }) {
    const page = await listKeys({
      ctx: deps.keys,
      input: { tenantId: sessionPrincipal(principal).tenantId, ...pageArgs(query, 200) },
    });
    return { status: 200, body: pageBody(await withKeyBudgets(deps, page.items), page.nextCursor, pageRequested(query)) };
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
    // The spending is read before the rotation: should managed-ai not answer, nothing is rotated
    // (after it, the new secret would be lost with the failed answer).
    const [current] = await withKeyBudgets(deps, [await getKey({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id } })]);
    const data = await rotateKey({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id, actor: `user:${me.userId}` } });
    return { status: 200, body: { data: { ...data, budget: current!.budget } } };
  },
});

export const patchKey = defineRoute<EdgeDeps, KeyParams, Record<string, never>, UpdateKeyRequest>({
  method: "patch",
  path: "/console/keys/:id",
  summary: "Set or remove the key's spend budget; the next request on every replica counts against the new one.",
  tags: ["console", "keys"],
  access: admin,
  params: KeyParams,
  body: UpdateKeyRequest,
  responses: { 200: { description: "updated", schema: KeyResponse }, 404: { description: "no such key" } },
  async handler({ deps, params, body, principal }) {
    const me = sessionPrincipal(principal);
    const budget = body.budget_units !== null && body.budget_period !== null ? { units: BigInt(body.budget_units), period: body.budget_period } : null;
    const data = await updateKeyBudget({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id, actor: `user:${me.userId}`, budget } });
    return { status: 200, body: { data: (await withKeyBudgets(deps, [data]))[0]! } };
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
