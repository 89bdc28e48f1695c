import type { KeysContext } from "./context.js";
import type { KeyRecord } from "./key-store.js";

/**
 * The first time a key is presented after its expiry it is disabled for good
 * and `key.expired` is recorded, once, whichever replica sees it first.
 */
export async function expireKey(ctx: KeysContext, key: KeyRecord): Promise<void> {
  if (key.expired) return;
  const version = await ctx.transact(async (tx, emit) => {
    const changed = await tx.apiKey.updateMany({ where: { id: key.id, expiredAt: null }, data: { expiredAt: new Date(), version: { increment: 1 } } });
    if (changed.count === 0) return null;
    await emit("key.expired", { key_id: key.id, tenant_id: key.tenantId, expires_at: (key.expiresAt ?? new Date()).toISOString() });
    return (await tx.apiKey.findUniqueOrThrow({ where: { id: key.id }, select: { version: true } })).version;
  });
  if (version !== null) {
    await ctx.limits.publishVersion(key.id, version);
    await ctx.store.invalidate(key.id);
  }
}
