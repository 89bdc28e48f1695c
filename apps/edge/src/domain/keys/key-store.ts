import type { BlockList } from "node:net";
import type { Logger } from "@gateway/logger";
import type { PrismaClient } from "../../db.js";
import type { ApiKey } from "../../generated/prisma/client.js";
import type { Broadcast } from "@gateway/events-runtime";
import { parseCidrs } from "./client-ip.js";
import type { LimitedKey } from "./limits.js";
import type { KeyBudget } from "../principal.js";

/** The stored budget, when both halves are set. */
export function keyBudgetOf(row: Pick<ApiKey, "budgetUnits" | "budgetPeriod">): KeyBudget | null {
  if (row.budgetUnits === null || (row.budgetPeriod !== "day" && row.budgetPeriod !== "month")) return null;
  return { units: row.budgetUnits, period: row.budgetPeriod };
}

/** A key as the hot path needs it: sets and parsed CIDRs, ready to check. */
export type KeyRecord = LimitedKey & {
  tenantId: string;
  name: string;
  prefix: string;
  scopes: ReadonlySet<string>;
  /** null: any service alias. */
  serviceAliases: ReadonlySet<string> | null;
  /** null: any address. */
  allowedIps: BlockList | null;
  expiresAt: Date | null;
  expired: boolean;
  revoked: boolean;
  budget?: KeyBudget | null;
};

export type KeyInvalidation = { key_id: string };

type Entry = { record: KeyRecord | null; until: number };

export function toRecord(row: ApiKey, logger?: Logger): KeyRecord {
  let allowedIps: BlockList | null = null;
  if (row.allowedIps.length > 0) {
    try {
      allowedIps = parseCidrs(row.allowedIps);
    } catch (err) {
      // Validated on write; a bad stored entry must deny, not allow everyone.
      logger?.error({ err, key_id: row.id }, "stored allowed_ips do not parse; denying every address");
      allowedIps = parseCidrs([]);
    }
  }
  return {
    id: row.id,
    tenantId: row.tenantId,
    name: row.name,
    prefix: row.prefix,
    version: row.version,
    scopes: new Set(row.scopes),
    serviceAliases: row.serviceAliases.length > 0 ? new Set(row.serviceAliases) : null,
    allowedIps,
    dailyQuota: row.dailyQuota,
    rateLimitPerMinute: row.rateLimitPerMinute,
    concurrencyLimit: row.concurrencyLimit,
    expiresAt: row.expiresAt,
    expired: row.expiredAt !== null,
    revoked: row.revokedAt !== null,
    budget: keyBudgetOf(row),
  };
}

/**
 * Keys by hash, kept in memory: verifying a key costs a SHA-256 and a map
 * lookup. Freshness does not depend on this cache: every admission checks the
 * key's version in Redis (see limits.ts) and reloads on a mismatch. Unknown
 * hashes are remembered briefly so a flood of bad keys does not reach the database.
 */
export class KeyStore {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly options: {
      prisma: PrismaClient;
      ttlMs: number;
      negativeTtlMs?: number;
      broadcast: Broadcast<KeyInvalidation>;
      logger: Logger;
      maxEntries?: number;
    },
  ) {}

  listen(): void {
    this.options.broadcast.listen((m) => this.drop(m.key_id));
  }

  async find(hash: string): Promise<KeyRecord | null> {
    const cached = this.entries.get(hash);
    if (cached && cached.until > Date.now()) return cached.record;
    return this.reload(hash);
  }

  async reload(hash: string): Promise<KeyRecord | null> {
    const row = await this.options.prisma.apiKey.findUnique({ where: { hash } });
    const record = row ? toRecord(row, this.options.logger) : null;
    if (this.entries.size >= (this.options.maxEntries ?? 100_000)) this.entries.clear();
    const ttl = record ? this.options.ttlMs : (this.options.negativeTtlMs ?? 2_000);
    this.entries.set(hash, { record, until: Date.now() + ttl });
    return record;
  }

  /** Forgets the key here and on every other replica. */
  async invalidate(keyId: string): Promise<void> {
    this.drop(keyId);
    await this.options.broadcast.send({ key_id: keyId });
  }

  private drop(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.record?.id === keyId) this.entries.delete(hash);
  }
}
