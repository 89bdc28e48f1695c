import { AppError } from "@gateway/errors";
import type { ApiKeyPrincipal } from "../principal.js";
import type { KeysContext } from "./context.js";
import { expireKey } from "./expire-key.js";
import { hashKey, looksLikeKey } from "./key-format.js";
import type { KeyRequest } from "./key-request.js";
import type { KeyRecord } from "./key-store.js";
import type { Admission } from "./limits.js";
import type { Scope, ServiceType } from "./scopes.js";
import { ipAllowed } from "./client-ip.js";

export type KeyRequirement = {
  /** Absent: any valid key. */
  scope?: Scope;
  /** The service instance the request addresses, checked against `service_aliases`. */
  service?: { type: ServiceType; alias: string };
};

type LocalDenial = "ip_not_allowed" | "scope_missing" | "service_alias_not_allowed";

const MESSAGES: Record<LocalDenial | "daily_quota" | "rate_limit" | "concurrency", string> = {
  ip_not_allowed: "This key may not be used from this address.",
  scope_missing: "This key lacks the scope this route needs.",
  service_alias_not_allowed: "This key may not use this service instance.",
  daily_quota: "This key's daily quota is used up; it resets at 00:00 UTC.",
  rate_limit: "This key's per-minute rate limit is reached.",
  concurrency: "This key has as many requests in flight as it may.",
};

export function localDenial(key: KeyRecord, requirement: KeyRequirement, ip: string): LocalDenial | null {
  if (key.allowedIps && !ipAllowed(key.allowedIps, ip)) return "ip_not_allowed";
  if (requirement.scope && !key.scopes.has("*") && !key.scopes.has(requirement.scope)) return "scope_missing";
  if (requirement.service && key.serviceAliases && !key.serviceAliases.has(`${requirement.service.type}:${requirement.service.alias}`)) {
    return "service_alias_not_allowed";
  }
  return null;
}

const unauthorized = (message = "The API key is invalid, revoked or expired.") => new AppError("unauthorized", message);

/**
 * The key policy of every API-key request (`presented`: the key the request sent, as
 * the HTTP layer read it), in the contract's order:
 * unknown / revoked / expired → 401; address → 403; scope → 403; service alias
 * → 403; daily quota → 429; per-minute rate → 429; concurrency → 429.
 * The cached key is checked against its version in Redis in the same round
 * trip that applies the limits, and reloaded when another replica changed it.
 */
export async function authenticateKey(ctx: KeysContext, req: KeyRequest, presented: string | undefined, requirement: KeyRequirement): Promise<ApiKeyPrincipal> {
  if (!presented) throw unauthorized("Send an API key: X-API-Key: <key>, or Authorization: Bearer <key>.");
  if (!looksLikeKey(presented)) throw unauthorized();
  const hash = hashKey(presented);
  let key = await ctx.store.find(hash);
  let verified = false;

  const refresh = async () => {
    verified = true;
    const fresh = await ctx.store.reload(hash);
    if (fresh) await ctx.limits.publishVersion(fresh.id, fresh.version);
    return fresh;
  };

  for (let attempt = 0; attempt < 3; attempt++) {
    if (!key || key.revoked) throw unauthorized();
    if (key.expired || (key.expiresAt && key.expiresAt.getTime() <= Date.now())) {
      await expireKey(ctx, key);
      throw unauthorized();
    }
    const ip = ctx.clientIp.resolve(req);
    const local = localDenial(key, requirement, ip);
    if (local) {
      // Deny on fresh data only: the key may have changed on another replica.
      if (!verified && !(await ctx.limits.isCurrent(key.id, key.version))) {
        key = await refresh();
        continue;
      }
      await recordDenial(ctx, key, local, req, ip);
      throw new AppError("forbidden", MESSAGES[local]);
    }
    const admission: Admission = await ctx.limits.admit(key, req.requestId);
    if (admission.kind === "stale") {
      key = await refresh();
      continue;
    }
    if (admission.kind === "denied") {
      await recordDenial(ctx, key, admission.reason, req, ip);
      if (admission.firstQuotaDenial) {
        await emitQuietly(ctx, () =>
          ctx.emitAlone("key.quota_exceeded", {
            key_id: key!.id,
            tenant_id: key!.tenantId,
            day: admission.firstQuotaDenial!.day,
            daily_quota: key!.dailyQuota ?? 0,
          }),
        );
      }
      throw new AppError("rate_limited", MESSAGES[admission.reason], { retryAfter: admission.retryAfterSeconds });
    }
    if (key.concurrencyLimit !== null) holdLease(ctx, req, key.id);
    return { kind: "apiKey", keyId: key.id, tenantId: key.tenantId, keyName: key.name, keyPrefix: key.prefix, scopes: key.scopes, budget: key.budget };
  }
  ctx.logger.error({ key_id: key?.id }, "key version in Redis is ahead of the database; check REDIS_KEY_PREFIX is not shared");
  throw new AppError("unavailable", "The key could not be verified; try again.");
}

/** The concurrency slot is held until the response or stream ends (or the client goes), renewed while it lasts. */
function holdLease(ctx: KeysContext, req: KeyRequest, keyId: string): void {
  const leaseId = req.requestId;
  const renew = setInterval(
    () => {
      ctx.limits.renew(keyId, leaseId).catch((err: unknown) => ctx.logger.warn({ err, key_id: keyId }, "lease renewal failed"));
    },
    Math.max(1_000, Math.floor(ctx.limits.leaseTtlMs / 3)),
  );
  renew.unref();
  req.res!.once("close", () => {
    clearInterval(renew);
    ctx.limits.release(keyId, leaseId).catch((err: unknown) => ctx.logger.warn({ err, key_id: keyId }, "lease release failed; it expires by itself"));
  });
}

async function recordDenial(ctx: KeysContext, key: KeyRecord, reason: LocalDenial | "daily_quota" | "rate_limit" | "concurrency", req: KeyRequest, ip: string) {
  await emitQuietly(ctx, () =>
    ctx.emitAlone("key.policy_denied", { key_id: key.id, tenant_id: key.tenantId, reason, method: req.method, path: req.path, client_ip: ip }),
  );
}

/** A denial is answered even when its audit event cannot be written; the failure is logged. */
async function emitQuietly(ctx: KeysContext, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    ctx.logger.error({ err }, "could not write a key audit event");
  }
}
