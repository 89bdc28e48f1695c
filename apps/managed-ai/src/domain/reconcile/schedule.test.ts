import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { reconcilerWorkPending } from "./pending.js";
import { startReconciler } from "./schedule.js";

/** The reconciler's schedule on a real database (docs/decisions/0200): it backs off while idle, and comes back at once. */
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t?.close());

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("the reconciler's schedule", () => {
  it("doubles its wait while passes find nothing pending and no call is served; a call or pending work brings it back", async () => {
    let calls = 0;
    let passes = 0;
    const reconciler = startReconciler(t.ctx, {
      pool: t.pool,
      intervalMs: 40,
      idleMaxMs: 320,
      reservedAfterSeconds: 900,
      activity: () => calls,
      onPass: () => passes++,
    });
    try {
      expect(await reconcilerWorkPending(t.ctx)).toBe(false);
      await until("the longest wait", () => reconciler.nextWaitMs() === 320);

      calls++; // a call served: the next wait is the usual one
      await until("the usual wait after a call", () => reconciler.nextWaitMs() === 40, 2_000);

      // A request under way (its record reserved, not due for 900 s): pending, so no backoff.
      await t.ctx.sql.query(
        `INSERT INTO usage_records (id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
           input_tokens_bound, output_tokens_cap, reserved_units, hold_id, hold_expires_at, created_at, updated_at)
         VALUES ('req_pending1', 'ten_1', NULL, 'ai', 'small', 'price_1', 'up_1', 0, 'reserved', false, 10, 10, 100, 'hold_x', now() + interval '1 hour', now(), now())`,
        [],
      );
      expect(await reconcilerWorkPending(t.ctx)).toBe(true);
      const seen = passes;
      await until("three more passes", () => passes >= seen + 3, 2_000);
      expect(reconciler.nextWaitMs()).toBe(40);
    } finally {
      await reconciler.stop();
    }
  });

  it("keeps a fixed interval without idleMaxMs", async () => {
    let passes = 0;
    const reconciler = startReconciler(t.ctx, { pool: t.pool, intervalMs: 30, reservedAfterSeconds: 900, onPass: () => passes++ });
    try {
      await until("four passes", () => passes >= 4);
      expect(reconciler.nextWaitMs()).toBe(30);
    } finally {
      await reconciler.stop();
    }
  });
});
