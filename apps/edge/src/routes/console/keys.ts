import { pageRequested } from "@gateway/contract";
import { createKey, getKey, listKeys, revokeKey, rotateKey, updateKeyBudget } from "../../domain/keys/manage-keys.js";
import { sessionPrincipal } from "../../http/access.js";
import { created, forward, noContent, ok } from "../forward.js";
import { admin } from "./console-access.js";
import { withFreshBudget, withKeyBudgets } from "./key-budgets.js";
import { pageArgs, pageBody } from "../page.js";
import { CreateKeyRequest, KeyListQuery, KeyListResponse, KeyParams, KeyResponse, KeyWithSecretResponse, UpdateKeyRequest } from "./keys.types.js";

const ADMIN = admin("keys");

export const postKey = forward(ADMIN, "post /console/keys", {
  summary: "Create an API key with its policy. The plaintext key is in this answer only.",
  body: CreateKeyRequest,
  responses: { 201: ["created", KeyWithSecretResponse] },
  async call({ deps, body, principal }) {
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
    return data;
  },
  answer: (key) => created(withFreshBudget(key)),
});

export const getKeys = forward(ADMIN, "get /console/keys", {
  summary: "The tenant's live API keys, newest first, without secrets: the newest 200, or a page at a time with `limit` and `cursor`.",
  query: KeyListQuery,
  responses: { 200: ["keys", KeyListResponse] },
  async call({ deps, query, tenantId }) {
    const page = await listKeys({ ctx: deps.keys, input: { tenantId, ...pageArgs(query, 200) } });
    return { items: await withKeyBudgets(deps, page.items), nextCursor: page.nextCursor };
  },
  answer: (page, { query }) => ({ status: 200, body: pageBody(page.items, page.nextCursor, pageRequested(query)) }),
});

export const postKeyRotate = forward(ADMIN, "post /console/keys/:id/rotate", {
  summary: "Replace the key's secret; the old one fails at once on every replica.",
  params: KeyParams,
  responses: { 200: ["rotated", KeyWithSecretResponse], 404: "no such key" },
  async call({ deps, params, principal }) {
    const me = sessionPrincipal(principal);
    // The spending is read before the rotation: should managed-ai not answer, nothing is rotated
    // (after it, the new secret would be lost with the failed answer).
    const [current] = await withKeyBudgets(deps, [await getKey({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id } })]);
    const data = await rotateKey({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id, actor: `user:${me.userId}` } });
    return { ...data, budget: current!.budget };
  },
  answer: ok,
});

export const patchKey = forward(ADMIN, "patch /console/keys/:id", {
  summary: "Set or remove the key's spend budget; the next request on every replica counts against the new one.",
  params: KeyParams,
  body: UpdateKeyRequest,
  responses: { 200: ["updated", KeyResponse], 404: "no such key" },
  async call({ deps, params, body, principal }) {
    const me = sessionPrincipal(principal);
    const budget = body.budget_units !== null && body.budget_period !== null ? { units: BigInt(body.budget_units), period: body.budget_period } : null;
    const data = await updateKeyBudget({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id, actor: `user:${me.userId}`, budget } });
    return (await withKeyBudgets(deps, [data]))[0]!;
  },
  answer: ok,
});

export const deleteKey = forward(ADMIN, "delete /console/keys/:id", {
  summary: "Revoke the key; it fails at once on every replica.",
  params: KeyParams,
  responses: { 204: "revoked", 404: "no such key" },
  call: ({ deps, params, principal }) => {
    const me = sessionPrincipal(principal);
    return revokeKey({ ctx: deps.keys, input: { tenantId: me.tenantId, keyId: params.id, actor: `user:${me.userId}` } });
  },
  answer: noContent,
});
