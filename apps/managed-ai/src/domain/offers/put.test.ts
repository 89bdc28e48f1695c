import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { listCustomerModels } from "../customer-models/list.js";
import { putModel } from "../models/put.js";
import { publishPrice } from "../prices/publish.js";
import { putUpstream } from "../upstreams/put.js";
import { listOffers } from "./list.js";
import { putOffer } from "./put.js";
import { effectiveDiscountBps } from "./view.js";

const actor = "user:usr_op";
let t: TestContext;

beforeAll(async () => {
  t = await createTestContext();
  await putUpstream({ ctx: t.ctx, input: { id: "up", provider: "openai", base_url: "http://x.example/v1", actor } });
  for (const alias of ["m_a", "m_b", "m_unpriced"]) await putModel({ ctx: t.ctx, input: { alias, upstream_id: "up", upstream_model: "gpt-x", actor } });
  await publishPrice({ ctx: t.ctx, input: { model_alias: "m_a", input_units_per_mtok: 100, output_units_per_mtok: 200, actor } });
  await publishPrice({ ctx: t.ctx, input: { model_alias: "m_b", input_units_per_mtok: 300, output_units_per_mtok: 400, actor } });
});
afterAll(() => t?.close());

describe("putOffer", () => {
  it("creates one offer per (tenant, model) and replaces it in place", async () => {
    const first = await putOffer({ ctx: t.ctx, input: { tenant_id: "ten_1", model_alias: "m_a", discount_bps: 1000, actor } });
    expect(first.version).toBe(1);
    expect(first.id).toMatch(/^offer_/);
    const second = await putOffer({
      ctx: t.ctx,
      input: { tenant_id: "ten_1", model_alias: "m_a", discount_bps: 2500, expires_at: "2999-01-01T00:00:00Z", version: 1, actor },
    });
    expect(second).toEqual({ id: first.id, version: 2 });
    // expires_at absent keeps it; "" removes it.
    await putOffer({ ctx: t.ctx, input: { tenant_id: "ten_1", model_alias: "m_a", discount_bps: 2500, actor } });
    expect((await listOffers({ ctx: t.ctx, input: { tenant_id: "ten_1" } }))[0]!.expiresAt).toEqual(new Date("2999-01-01T00:00:00Z"));
    await putOffer({ ctx: t.ctx, input: { tenant_id: "ten_1", model_alias: "m_a", discount_bps: 2500, expires_at: "", actor } });
    const [offer] = await listOffers({ ctx: t.ctx, input: { tenant_id: "ten_1" } });
    expect(offer).toMatchObject({ id: first.id, discountBps: 2500, expiresAt: null, version: 4 });
    const events = (await t.outbox()).filter((e) => e.type === "managed_ai.offer_changed").map((e) => e.payload);
    expect(events[1]).toMatchObject({
      actor,
      offer_id: first.id,
      tenant_id: "ten_1",
      change: "updated",
      before: { discount_bps: 1000, expires_at: null, version: 1 },
      after: { discount_bps: 2500, expires_at: "2999-01-01T00:00:00.000Z", version: 2 },
    });
  });

  it("is refused for an unknown model, a stale version, out-of-range basis points or a bad timestamp", async () => {
    await expect(putOffer({ ctx: t.ctx, input: { tenant_id: "ten_1", model_alias: "nope", discount_bps: 1, actor } })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(putOffer({ ctx: t.ctx, input: { tenant_id: "ten_1", model_alias: "m_a", discount_bps: 1, version: 1, actor } })).rejects.toMatchObject({
      code: "conflict",
    });
    for (const input of [
      { discount_bps: 10_001 },
      { discount_bps: -1 },
      { discount_bps: 1, expires_at: "tomorrow" },
      { discount_bps: 1, expires_at: "2030-01-01T00:00:00+02:00" },
    ]) {
      await expect(putOffer({ ctx: t.ctx, input: { tenant_id: "ten_1", model_alias: "m_a", actor, ...input } }), JSON.stringify(input)).rejects.toMatchObject({
        code: "invalid_request",
      });
    }
  });

  it("lets exactly one of concurrent creations (version 0) of a (tenant, model) offer win", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => putOffer({ ctx: t.ctx, input: { tenant_id: "ten_race", model_alias: "m_b", discount_bps: i, version: 0, actor } })),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await listOffers({ ctx: t.ctx, input: { tenant_id: "ten_race" } })).toHaveLength(1);
  });
});

describe("customer view", () => {
  it("lists priced models with list prices and the tenant's unexpired discount", async () => {
    await putOffer({ ctx: t.ctx, input: { tenant_id: "ten_2", model_alias: "m_b", discount_bps: 5000, expires_at: "2000-01-01T00:00:00Z", actor } });
    await putOffer({ ctx: t.ctx, input: { tenant_id: "ten_2", model_alias: "m_a", discount_bps: 700, actor } });
    const view = await listCustomerModels({ ctx: t.ctx, input: { tenant_id: "ten_2" } });
    expect(view.map((m) => [m.alias, m.inputUnitsPerMtok, m.outputUnitsPerMtok, m.discountBps])).toEqual([
      ["m_b", 300n, 400n, 0],
      ["m_a", 100n, 200n, 700],
    ]);
    expect((await listCustomerModels({ ctx: t.ctx, input: { tenant_id: "ten_other" } })).map((m) => m.discountBps)).toEqual([0, 0]);
  });

  it("counts an offer only until it expires", () => {
    const now = new Date("2030-01-01T00:00:00Z");
    expect(effectiveDiscountBps(undefined, now)).toBe(0);
    expect(effectiveDiscountBps({ discountBps: 300, expiresAt: null }, now)).toBe(300);
    expect(effectiveDiscountBps({ discountBps: 300, expiresAt: new Date("2030-01-01T00:00:01Z") }, now)).toBe(300);
    expect(effectiveDiscountBps({ discountBps: 300, expiresAt: now }, now)).toBe(0);
  });
});
