import { Redis } from "ioredis";
import type { Logger } from "@gateway/logger";

export type RedisSettings = { url: string; commandTimeoutMs: number; reconnectMaxMs: number };

/**
 * The edge's Redis connection, failing closed and fast (docs/decisions/0235):
 * - no offline queue: while the connection is down every command fails at once, and the
 *   request with it (503), instead of waiting for a Redis that may not come back;
 * - a command timeout: a Redis that hangs (accepts, never answers) fails the command
 *   after `commandTimeoutMs`, and the connection is cut, so the commands after it fail at
 *   once too instead of each waiting out its own timeout;
 * - reconnect attempts at most `reconnectMaxMs` apart, so limits are back within that
 *   long of Redis returning.
 * Auto-pipelining sends the commands of concurrent requests in one write.
 */
export function createRedis(settings: RedisSettings, logger: Logger): Redis {
  const redis = new Redis(settings.url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 3_000,
    commandTimeout: settings.commandTimeoutMs,
    retryStrategy: (times) => Math.min(times * 50, settings.reconnectMaxMs),
    lazyConnect: true,
    enableAutoPipelining: true,
  });
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((...args: Parameters<Redis["sendCommand"]>) => {
    const sent = send(...args) as Promise<unknown>;
    sent.catch((err: unknown) => {
      if (err instanceof Error && err.message === "Command timed out" && redis.status === "ready") {
        logger.warn({ timeout_ms: settings.commandTimeoutMs }, "redis did not answer in time: reconnecting, commands fail until it answers");
        redis.disconnect(true);
      }
    });
    return sent;
  }) as Redis["sendCommand"];
  redis.on("error", (err) => logger.warn({ err: err.message }, "redis error"));
  return redis;
}
