import type { Redis } from "ioredis";
import { newId } from "@gateway/contract/ids";
import { guarded } from "../keys/limits.js";

/**
 * A sliding-window log of the last 60 s per widget session, in Redis so that every
 * edge replica counts the same requests (as the API keys' per-minute rate). One
 * script per request: the request is counted only when it is admitted.
 */
const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 60000)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) + 60000 - now
end
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], 61000)
return 0
`;

export type WidgetRateLimiter = {
  /** 0 when admitted, else how many milliseconds until the session may send again. */
  admit(sessionId: string): Promise<number>;
};

type WidgetRedis = Redis & { gwWidgetAdmit(key: string, limit: number, member: string): Promise<number> };

/**
 * `perMinute` requests per widget session and minute; 0 turns the limit off. Keys under
 * the deployment's `REDIS_KEY_PREFIX`, like the API keys' limits; a store that cannot
 * answer admits nothing (503), as for keys.
 */
export function widgetRateLimiter(redis: Redis, prefix: string, perMinute: number): WidgetRateLimiter {
  redis.defineCommand("gwWidgetAdmit", { numberOfKeys: 1, lua: ADMIT });
  const limits = redis as WidgetRedis;
  return {
    async admit(sessionId) {
      if (perMinute <= 0) return 0;
      const wait = await guarded(() => limits.gwWidgetAdmit(`${prefix}:widget:{${sessionId}}:r`, perMinute, newId("adm")));
      return Math.max(0, Number(wait));
    },
  };
}
