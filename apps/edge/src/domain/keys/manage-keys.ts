import { AppError } from "@gateway/errors";
import { newestFirst, type Page } from "@gateway/contract";
import { newId } from "@gateway/contract/ids";
import type { ApiKey } from "../../generated/prisma/client.js";
import type { KeysContext } from "./context.js";
import { generateKey } from "./key-format.js";
import { keyBudgetOf } from "./key-store.js";
import type { KeyBudget } from "../principal.js";

export type KeyView = {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  service_aliases: string[] | null;
  allowed_ips: string[] | null;
  daily_quota: number | null;
  rate_limit_per_minute: number | null;
  concurrency_limit: number | null;
  expires_at: string | null;
  created_at: string;
  /** The key's spend budget as stored; routes add the current period's spending (docs/decisions/0024). */
  budget: { limit_units: number; period: "day" | "month" } | null;
};

/** The key as lists show it: never the secret or its hash. Empty restriction lists read as null (no restriction). */
export function keyView(row: ApiKey): KeyView {
  const budget = keyBudgetOf(row);
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    service_aliases: row.serviceAliases.length > 0 ? row.serviceAliases : null,
    allowed_ips: row.allowedIps.length > 0 ? row.allowedIps : null,
    daily_quota: row.dailyQuota,
    rate_limit_per_minute: row.rateLimitPerMinute,
    concurrency_limit: row.concurrencyLimit,
    expires_at: row.expiresAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    budget: budget ? { limit_units: Number(budget.units), period: budget.period } : null,
  };
}

export type CreateKeyInput = {
  tenantId: string;
  actor: string;
  name: string;
  scopes: string[];
  serviceAliases: string[];
  allowedIps: string[];
  dailyQuota: number | null;
  rateLimitPerMinute: number | null;
  concurrencyLimit: number | null;
  expiresAt: Date | null;
  budget?: KeyBudget | null;
};

/** Creates a key; the plaintext exists only in this answer. */
export async function createKey({ ctx, input }: { ctx: KeysContext; input: CreateKeyInput }): Promise<KeyView & { key: string }> {
  const generated = generateKey();
  const row = await ctx.transact(async (tx, emit) => {
    const created = await tx.apiKey.create({
      data: {
        id: newId("key"),
        tenantId: input.tenantId,
        name: input.name,
        prefix: generated.prefix,
        hash: generated.hash,
        scopes: [...new Set(input.scopes)],
        serviceAliases: [...new Set(input.serviceAliases)],
        allowedIps: [...new Set(input.allowedIps)],
        dailyQuota: input.dailyQuota,
        rateLimitPerMinute: input.rateLimitPerMinute,
        concurrencyLimit: input.concurrencyLimit,
        expiresAt: input.expiresAt,
        budgetUnits: input.budget?.units ?? null,
        budgetPeriod: input.budget?.period ?? null,
        createdBy: input.actor,
      },
    });
    await emit("key.created", { key_id: created.id, tenant_id: created.tenantId, name: created.name, prefix: created.prefix, actor: input.actor });
    return created;
  });
  await ctx.limits.publishVersion(row.id, row.version);
  return { ...keyView(row), key: generated.plaintext };
}

/**
 * The tenant's live keys, newest first, a page at a time (docs/decisions/0212): `limit`
 * 1..200, `cursor` a next cursor of this list ("" the first page).
 */
export async function listKeys({ ctx, input }: { ctx: KeysContext; input: { tenantId: string; limit: number; cursor: string } }): Promise<Page<KeyView>> {
  const page = await newestFirst((args) => ctx.prisma.apiKey.findMany(args), { tenantId: input.tenantId, revokedAt: null }, input);
  return { items: page.items.map(keyView), nextCursor: page.nextCursor };
}

/** One live key of the tenant (404 otherwise). */
export async function getKey({ ctx, input }: { ctx: KeysContext; input: { tenantId: string; keyId: string } }): Promise<KeyView> {
  return keyView(await ownedLiveKey(ctx, input.tenantId, input.keyId));
}

async function ownedLiveKey(ctx: KeysContext, tenantId: string, keyId: string): Promise<ApiKey> {
  const row = await ctx.prisma.apiKey.findUnique({ where: { id: keyId } });
  if (!row || row.tenantId !== tenantId || row.revokedAt) throw new AppError("not_found", "No such key.");
  return row;
}

/**
 * A new secret for the same key (same id, policy and counters). The old secret
 * fails at once on every replica: its hash no longer matches, and the version
 * bump makes replicas that cached it reload.
 */
export async function rotateKey({
  ctx,
  input,
}: {
  ctx: KeysContext;
  input: { tenantId: string; keyId: string; actor: string };
}): Promise<KeyView & { key: string }> {
  await ownedLiveKey(ctx, input.tenantId, input.keyId);
  const generated = generateKey();
  const row = await ctx.transact(async (tx, emit) => {
    const changed = await tx.apiKey.updateMany({
      where: { id: input.keyId, tenantId: input.tenantId, revokedAt: null },
      data: { hash: generated.hash, prefix: generated.prefix, version: { increment: 1 } },
    });
    if (changed.count === 0) throw new AppError("not_found", "No such key.");
    await emit("key.rotated", { key_id: input.keyId, tenant_id: input.tenantId, prefix: generated.prefix, actor: input.actor });
    return tx.apiKey.findUniqueOrThrow({ where: { id: input.keyId } });
  });
  await propagate(ctx, row);
  return { ...keyView(row), key: generated.plaintext };
}

/**
 * Sets or removes the key's spend budget. The version bump makes every edge
 * replica reload the key before its next request (decision 0020), so the next
 * request anywhere carries the new budget to managed-ai, which checks the
 * period's spending against it: a budget lowered below what is spent refuses
 * that request at once. Audited as `key.budget_changed`.
 */
export async function updateKeyBudget({
  ctx,
  input,
}: {
  ctx: KeysContext;
  input: { tenantId: string; keyId: string; actor: string; budget: KeyBudget | null };
}): Promise<KeyView> {
  await ownedLiveKey(ctx, input.tenantId, input.keyId);
  const row = await ctx.transact(async (tx, emit) => {
    const changed = await tx.apiKey.updateMany({
      where: { id: input.keyId, tenantId: input.tenantId, revokedAt: null },
      data: { budgetUnits: input.budget?.units ?? null, budgetPeriod: input.budget?.period ?? null, version: { increment: 1 } },
    });
    if (changed.count === 0) throw new AppError("not_found", "No such key.");
    await emit("key.budget_changed", {
      key_id: input.keyId,
      tenant_id: input.tenantId,
      budget_units: input.budget ? input.budget.units.toString() : null,
      budget_period: input.budget?.period ?? null,
      actor: input.actor,
    });
    return tx.apiKey.findUniqueOrThrow({ where: { id: input.keyId } });
  });
  await propagate(ctx, row);
  return keyView(row);
}

export async function revokeKey({ ctx, input }: { ctx: KeysContext; input: { tenantId: string; keyId: string; actor: string } }): Promise<void> {
  await ownedLiveKey(ctx, input.tenantId, input.keyId);
  const row = await ctx.transact(async (tx, emit) => {
    const changed = await tx.apiKey.updateMany({
      where: { id: input.keyId, tenantId: input.tenantId, revokedAt: null },
      data: { revokedAt: new Date(), version: { increment: 1 } },
    });
    if (changed.count === 0) throw new AppError("not_found", "No such key.");
    await emit("key.revoked", { key_id: input.keyId, tenant_id: input.tenantId, actor: input.actor });
    return tx.apiKey.findUniqueOrThrow({ where: { id: input.keyId } });
  });
  await propagate(ctx, row);
}

/** After a committed change: the new version to Redis (strict), then the cache broadcast (fast). */
async function propagate(ctx: KeysContext, row: ApiKey): Promise<void> {
  try {
    await ctx.limits.publishVersion(row.id, row.version);
  } catch (err) {
    // Committed either way; replicas also drop the key on the broadcast and within KEY_CACHE_TTL_MS.
    ctx.logger.error({ err, key_id: row.id }, "could not publish the key version to Redis");
  }
  await ctx.store.invalidate(row.id);
}
