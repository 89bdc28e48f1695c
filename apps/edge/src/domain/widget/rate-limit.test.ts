import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { widgetRateLimiter } from "./rate-limit.js";
import { WidgetSessions } from "./widget-sessions.js";

const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: 1 });
afterAll(() => redis.quit());
const tokens = { secret: "w".repeat(40), ttlSeconds: 900 };
const run = randomBytes(4).toString("hex");

function sessions(perMinute: number): WidgetSessions {
  return new WidgetSessions({
    // Every session is live: only the rate decides here.
    conversations: {
      GetWidgetSession: async (req: { session_id: string }) => ({
        session_id: req.session_id,
        tenant_id: "ten_1",
        chat_id: "chat_1",
        visitor_id: "v",
        conversation_id: "",
        revoked: false,
        generation: 0,
      }),
    } as never,
    tokens,
    ttlMs: 60_000,
    broadcast: { listen: () => undefined, send: async () => undefined } as never,
    limiter: widgetRateLimiter(redis, `gwtest${run}`, perMinute),
  });
}

describe("the widget session rate", () => {
  it("admits a session's requests up to the limit per minute, then answers rate_limited with a Retry-After; other sessions are not affected", async () => {
    const s = sessions(3);
    const token = s.sign({ sessionId: `wses_${run}_a`, tenantId: "ten_1", chatId: "chat_1", generation: 0 });
    const other = s.sign({ sessionId: `wses_${run}_b`, tenantId: "ten_1", chatId: "chat_1", generation: 0 });
    for (let i = 0; i < 3; i++) expect(await s.authenticate(token)).toMatchObject({ kind: "widget", sessionId: `wses_${run}_a` });
    const refused = await s.authenticate(token).catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: "rate_limited" });
    const retryAfter = (refused as { retryAfter: number }).retryAfter;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await s.authenticate(other)).toMatchObject({ sessionId: `wses_${run}_b` });
  });

  it("counts across replicas (one Redis), and only admitted requests", async () => {
    const a = sessions(4);
    const b = sessions(4);
    const token = a.sign({ sessionId: `wses_${run}_c`, tenantId: "ten_1", chatId: "chat_1", generation: 0 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a : b).authenticate(token).then(
          () => "ok",
          (err: { code: string }) => err.code,
        ),
      ),
    );
    expect(results.filter((r) => r === "ok")).toHaveLength(4);
    expect(results.filter((r) => r === "rate_limited")).toHaveLength(6);
  });

  it("admits nothing when the store cannot answer: 503 unavailable, not an unhandled error", async () => {
    const down = new Redis("redis://127.0.0.1:1", { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true, retryStrategy: () => null });
    const limiter = widgetRateLimiter(down, `gwtest${run}`, 5);
    await expect(limiter.admit(`wses_${run}_e`)).rejects.toMatchObject({ code: "unavailable" });
    down.disconnect();
  });

  it("is off at 0", async () => {
    const s = sessions(0);
    const token = s.sign({ sessionId: `wses_${run}_d`, tenantId: "ten_1", chatId: "chat_1", generation: 0 });
    for (let i = 0; i < 20; i++) expect(await s.authenticate(token)).not.toBeNull();
  });
});
