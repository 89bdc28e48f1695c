import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { AppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import { ipFamily } from "../keys/client-ip.js";
import { guarded } from "../keys/limits.js";

/*
 * Limits on the password and token routes (decision 0180), in Redis so every edge
 * replica counts the same attempts, checked before any costly work (a 32 MiB scrypt
 * run per password). Two scripts, each on keys of one hash tag (one slot on a cluster):
 *   ADMIT  a blocked-until time (the backoff) and a sliding window of the last 60 s;
 *          the attempt is counted only when it is admitted;
 *   FAILED one more consecutive failure; from the threshold on, the next attempt waits
 *          base * 2^(failures - threshold), at most max. A success clears it.
 */
const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local blocked = tonumber(redis.call('HGET', KEYS[2], 'blocked') or '0')
if blocked > now then return blocked - now end
local limit = tonumber(ARGV[1])
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
  if redis.call('ZCARD', KEYS[1]) >= limit then
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    return math.max(1, tonumber(oldest[2]) + 60000 - now)
  end
  redis.call('ZADD', KEYS[1], now, ARGV[2])
  redis.call('PEXPIRE', KEYS[1], 61000)
end
return 0
`;

const FAILED = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
local after = tonumber(ARGV[1])
local wait = 0
if after > 0 and n >= after then
  wait = tonumber(ARGV[3])
  if n - after < 40 then wait = math.min(wait, tonumber(ARGV[2]) * math.pow(2, n - after)) end
  wait = math.floor(wait)
  redis.call('HSET', KEYS[1], 'blocked', string.format('%d', now + wait))
end
redis.call('PEXPIRE', KEYS[1], wait + tonumber(ARGV[4]))
return wait
`;

/** Consecutive failures are forgotten this long after the last one (or after the backoff it set). */
const FAILURE_MEMORY_MS = 3_600_000;

export type AuthRoute = "login" | "register" | "refresh";

export type AuthAttemptSettings = {
  /** Attempts per client address, minute and route; 0: no limit. */
  perAddressPerMinute: number;
  /** Sign-in attempts per email and minute; 0: no limit. */
  perEmailPerMinute: number;
  /** Consecutive failed sign-ins of one email from which each further attempt waits; 0: no backoff. */
  backoffAfterFailures: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
};

type AttemptsRedis = Redis & {
  gwAuthAdmit(window: string, backoff: string, limit: number, member: string): Promise<number>;
  gwAuthFailed(backoff: string, after: number, baseMs: number, maxMs: number, memoryMs: number): Promise<number>;
};

/**
 * The part of an address that one client controls: an IPv4 address, an IPv6 /64
 * (the smallest block a provider hands out; counting /128s would give one
 * client 2^64 budgets).
 */
export function addressBucket(ip: string): string {
  if (ipFamily(ip) !== "ipv6") return ip;
  const [head = "", tail] = ip.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || "0", 16).toString(16))
    .join(":")}::/64`;
}

/** Emails are not stored in Redis: a digest of the normalized address keys the counters. */
function emailDigest(email: string): string {
  return createHash("sha256").update(email.trim().toLowerCase()).digest("base64url").slice(0, 32);
}

function limited(message: string, waitMs: number): AppError {
  return new AppError("rate_limited", message, { retryAfter: Math.max(1, Math.ceil(waitMs / 1000)) });
}

/**
 * Limits on /auth/login, /auth/register and /auth/refresh: a sliding window per
 * client address and route; for sign-ins also a window per email and an
 * exponential backoff per email after consecutive failures. Unknown emails are
 * counted exactly like known ones, so the answers tell nothing about which
 * exist. A store that cannot answer admits nothing (503), as for API keys.
 */
export class AuthAttempts {
  private readonly redis: AttemptsRedis;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly settings: AuthAttemptSettings,
  ) {
    redis.defineCommand("gwAuthAdmit", { numberOfKeys: 2, lua: ADMIT });
    redis.defineCommand("gwAuthFailed", { numberOfKeys: 1, lua: FAILED });
    this.redis = redis as AttemptsRedis;
  }

  private addressKey(address: string, part: string): string {
    return `${this.prefix}:auth:{a:${addressBucket(address)}}:${part}`;
  }

  private emailKey(email: string, part: string): string {
    return `${this.prefix}:auth:{e:${emailDigest(email)}}:${part}`;
  }

  /** Counts an attempt of `route` from `address`, or throws rate_limited (with Retry-After) past the limit. */
  async admitAddress(route: AuthRoute, address: string): Promise<void> {
    if (this.settings.perAddressPerMinute <= 0) return;
    const wait = await guarded(() =>
      this.redis.gwAuthAdmit(this.addressKey(address, route), this.addressKey(address, "b"), this.settings.perAddressPerMinute, newId("att")),
    );
    if (Number(wait) > 0) throw limited("Too many attempts from this address; try again later.", Number(wait));
  }

  /** Before a sign-in's password check: the address's limit, then the email's backoff and limit. */
  async admitSignIn(address: string, email: string): Promise<void> {
    await this.admitAddress("login", address);
    if (this.settings.perEmailPerMinute <= 0 && this.settings.backoffAfterFailures <= 0) return;
    const wait = await guarded(() =>
      this.redis.gwAuthAdmit(this.emailKey(email, "w"), this.emailKey(email, "f"), this.settings.perEmailPerMinute, newId("att")),
    );
    if (Number(wait) > 0) throw limited("Too many sign-in attempts for this email; try again later.", Number(wait));
  }

  /** A failed sign-in (unknown email or wrong password alike). */
  async failed(email: string): Promise<void> {
    if (this.settings.backoffAfterFailures <= 0) return;
    const { backoffAfterFailures, backoffBaseMs, backoffMaxMs } = this.settings;
    await guarded(() => this.redis.gwAuthFailed(this.emailKey(email, "f"), backoffAfterFailures, backoffBaseMs, backoffMaxMs, FAILURE_MEMORY_MS));
  }

  /** A successful sign-in ends the run of failures. */
  async succeeded(email: string): Promise<void> {
    if (this.settings.backoffAfterFailures <= 0) return;
    await guarded(() => this.redis.del(this.emailKey(email, "f")));
  }
}
