import type { Redis } from "ioredis";
import { AppError } from "@gateway/errors";

/*
 * Per-key limits in Redis, shared by every edge replica, decided by one Lua
 * script per request (atomic: no overshoot under any concurrency):
 *   1. version: the caller's cached copy of the key must be current, else "stale"
 *      (rotation, revocation and expiry reach every replica at once);
 *   2. daily quota per UTC day (server clock);
 *   3. per-minute rate: a sliding-window log of the last 60 s;
 *   4. concurrency: a set of leases that expire unless renewed.
 * Counters move only when every check passes, so the quota counts exactly the
 * requests that passed authentication and policy. Leases this replica released
 * since its last command for the key (ARGV[7..]) are removed first, whatever the
 * answer: a release rides on the next admission instead of costing a command.
 */
const ADMIT = `
if #ARGV > 6 then redis.call('ZREM', KEYS[4], unpack(ARGV, 7)) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then return {'stale', v or ''} end
local quota = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local conc = tonumber(ARGV[4])
local day = math.floor(now / 86400000)
local dayEnd = (day + 1) * 86400000
local qkey = KEYS[2] .. ':' .. day
if quota >= 0 then
  local used = tonumber(redis.call('GET', qkey) or '0')
  if used >= quota then
    local first = redis.call('SET', KEYS[5] .. ':' .. day, '1', 'NX', 'PX', dayEnd - now + 3600000)
    return {'daily_quota', tostring(dayEnd - now), first and '1' or '0', tostring(day)}
  end
end
if rate >= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - 60000)
  if redis.call('ZCARD', KEYS[3]) >= rate then
    local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    return {'rate_limit', tostring(tonumber(oldest[2]) + 60000 - now)}
  end
end
if conc >= 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  if redis.call('ZCARD', KEYS[4]) >= conc then return {'concurrency', '1000'} end
end
if quota >= 0 then
  redis.call('INCR', qkey)
  redis.call('PEXPIRE', qkey, dayEnd - now + 3600000)
end
if rate >= 0 then
  redis.call('ZADD', KEYS[3], now, ARGV[5])
  redis.call('PEXPIRE', KEYS[3], 61000)
end
if conc >= 0 then
  redis.call('ZADD', KEYS[4], now + tonumber(ARGV[6]), ARGV[5])
  redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[6]) + 1000)
end
return {'ok', ''}
`;

/** Moves a key's version forward only (a late writer cannot undo a rotation). */
const PUBLISH_VERSION = `
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) return 1 end
return 0
`;

const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) + 1000)
return 1
`;

export type LimitedKey = {
  id: string;
  version: number;
  dailyQuota: number | null;
  rateLimitPerMinute: number | null;
  concurrencyLimit: number | null;
};

export type Admission =
  | { kind: "ok" }
  | { kind: "stale" }
  | { kind: "denied"; reason: "daily_quota" | "rate_limit" | "concurrency"; retryAfterSeconds: number; firstQuotaDenial?: { day: string } };

type LimitsRedis = Redis & {
  gwAdmit(...args: (string | number)[]): Promise<string[]>;
  gwPublishVersion(key: string, version: number): Promise<number>;
  gwRenew(key: string, lease: string, ttlMs: number): Promise<number>;
};

/** A limits store that cannot answer means no request is admitted: 503, never unchecked. */
export async function guarded<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new AppError("unavailable", "The rate-limit store is unavailable; try again shortly.", { cause: err });
  }
}

const MAX_CARRIED_RELEASES = 256;

type PendingRelease = { leases: string[]; sent: { resolve(): void; reject(err: unknown): void }[] };

function settle(sent: Promise<unknown>, entry: PendingRelease): void {
  sent.then(
    () => {
      for (const w of entry.sent) w.resolve();
    },
    (err: unknown) => {
      for (const w of entry.sent) w.reject(err);
    },
  );
}

export class KeyLimits {
  private readonly redis: LimitsRedis;
  /** Leases released on this replica and not yet sent, by key id. */
  private readonly pending = new Map<string, PendingRelease>();
  private flushScheduled = false;
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    readonly leaseTtlMs: number,
    /**
     * How long a release waits for the next admission of its key to carry it before it goes
     * as a ZREM of its own (0: the end of this turn of the event loop). A client that sends
     * its next request within it costs one Redis command per request instead of two
     * (docs/decisions/0305); other replicas see the slot held that much longer.
     */
    readonly releaseLingerMs = 0,
  ) {
    redis.defineCommand("gwAdmit", { numberOfKeys: 5, lua: ADMIT });
    redis.defineCommand("gwPublishVersion", { numberOfKeys: 1, lua: PUBLISH_VERSION });
    redis.defineCommand("gwRenew", { numberOfKeys: 1, lua: RENEW });
    this.redis = redis as LimitsRedis;
  }

  /** Keys of one API key share a hash tag, so the script stays in one slot on a cluster. */
  private key(keyId: string, part: string): string {
    return `${this.prefix}:{${keyId}}:${part}`;
  }

  async admit(key: LimitedKey, leaseId: string): Promise<Admission> {
    // A script takes a bounded number of arguments; a longer list waits for its own ZREM.
    let releases = this.pending.get(key.id);
    if (releases && releases.leases.length <= MAX_CARRIED_RELEASES) {
      this.pending.delete(key.id);
      // Nothing left to send alone: the lingering flush would only wake the process.
      if (this.pending.size === 0 && this.flushTimer) {
        clearTimeout(this.flushTimer);
        this.flushTimer = undefined;
        this.flushScheduled = false;
      }
    } else releases = undefined;
    const sent = this.redis.gwAdmit(
      this.key(key.id, "v"),
      this.key(key.id, "q"),
      this.key(key.id, "r"),
      this.key(key.id, "c"),
      this.key(key.id, "qx"),
      String(key.version),
      key.dailyQuota ?? -1,
      key.rateLimitPerMinute ?? -1,
      key.concurrencyLimit ?? -1,
      leaseId,
      this.leaseTtlMs,
      ...(releases?.leases ?? []),
    );
    if (releases) settle(sent, releases);
    const [kind, a, b, c] = await guarded(() => sent);
    if (kind === "ok") return { kind: "ok" };
    if (kind === "stale") return { kind: "stale" };
    const retryAfterSeconds = Math.max(1, Math.ceil(Number(a) / 1000));
    if (kind === "daily_quota") {
      const day = new Date(Number(c) * 86_400_000).toISOString().slice(0, 10);
      return { kind: "denied", reason: "daily_quota", retryAfterSeconds, ...(b === "1" ? { firstQuotaDenial: { day } } : {}) };
    }
    return { kind: "denied", reason: kind as "rate_limit" | "concurrency", retryAfterSeconds };
  }

  /** Is the replica's cached version the one in Redis? */
  async isCurrent(keyId: string, version: number): Promise<boolean> {
    return (await guarded(() => this.redis.get(this.key(keyId, "v")))) === String(version);
  }

  /** Records the key's version from the database, never moving it backwards. */
  async publishVersion(keyId: string, version: number): Promise<void> {
    await guarded(() => this.redis.gwPublishVersion(this.key(keyId, "v"), version));
  }

  /**
   * Frees a concurrency slot. The release waits for the end of this turn of the
   * event loop, or `releaseLingerMs`: an admission of the same key issued meanwhile
   * carries it (its script removes the lease first), and what is left goes as one
   * ZREM per key. Until then the slot still counts, so a limit is never exceeded,
   * only, for that while, one request more strictly held to it (on this replica not
   * even that: its next admission of the key removes the lease before it counts).
   * Resolves once sent.
   */
  release(keyId: string, leaseId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      let entry = this.pending.get(keyId);
      if (!entry) {
        entry = { leases: [], sent: [] };
        this.pending.set(keyId, entry);
      }
      entry.leases.push(leaseId);
      entry.sent.push({ resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        if (this.releaseLingerMs > 0) this.flushTimer = setTimeout(() => this.flushReleases(), this.releaseLingerMs);
        else setImmediate(() => this.flushReleases());
      }
    });
  }

  private flushReleases(): void {
    this.flushScheduled = false;
    this.flushTimer = undefined;
    for (const [keyId, entry] of this.pending) settle(this.redis.zrem(this.key(keyId, "c"), ...entry.leases), entry);
    this.pending.clear();
  }

  async renew(keyId: string, leaseId: string): Promise<void> {
    await this.redis.gwRenew(this.key(keyId, "c"), leaseId, this.leaseTtlMs);
  }
}
