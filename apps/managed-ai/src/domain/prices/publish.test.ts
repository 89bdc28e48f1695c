import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { putModel } from "../models/put.js";
import { putUpstream } from "../upstreams/put.js";
import { listPrices } from "./list.js";
import { publishPrice } from "./publish.js";

const actor = "user:usr_op";
let t: TestContext;

beforeAll(async () => {
  t = await createTestContext();
  await putUpstream({ ctx: t.ctx, input: { id: "up", provider: "openai", base_url: "http://x.example/v1", actor } });
  for (const alias of ["m_serial", "m_race"]) await putModel({ ctx: t.ctx, input: { alias, upstream_id: "up", upstream_model: "gpt-x", actor } });
});
afterAll(() => t?.close());

describe("publishPrice", () => {
  it("publishes versions 1, 2, 3 and returns the model with the newest", async () => {
    const first = await publishPrice({ ctx: t.ctx, input: { model_alias: "m_serial", input_units_per_mtok: "1500", output_units_per_mtok: 6000, actor } });
    expect(first.price).toMatchObject({ modelAlias: "m_serial", version: 1, inputUnitsPerMtok: 1500n, outputUnitsPerMtok: 6000n });
    expect(first.price!.id).toMatch(/^price_[0-9A-Z]{26}$/);
    expect(first.version).toBe(1); // the model's own version is untouched by prices
    await publishPrice({ ctx: t.ctx, input: { model_alias: "m_serial", input_units_per_mtok: 0, output_units_per_mtok: 0, actor } });
    const third = await publishPrice({
      ctx: t.ctx,
      input: { model_alias: "m_serial", input_units_per_mtok: "9223372036854775807", output_units_per_mtok: 1, actor },
    });
    expect(third.price).toMatchObject({ version: 3, inputUnitsPerMtok: 9_223_372_036_854_775_807n });
    expect((await listPrices({ ctx: t.ctx, input: { model_alias: "m_serial" } })).map((p) => p.version)).toEqual([3, 2, 1]);
    expect((await listPrices({ ctx: t.ctx, input: { model_alias: "m_serial", limit: 2 } })).map((p) => p.version)).toEqual([3, 2]);

    const events = (await t.outbox()).filter((e) => e.type === "managed_ai.price_published").map((e) => e.payload);
    expect(events[1]).toMatchObject({
      actor,
      model_alias: "m_serial",
      price: { version: 2, input_units_per_mtok: "0" },
      previous: { version: 1, input_units_per_mtok: "1500", output_units_per_mtok: "6000" },
    });
    expect(events[0]!.previous).toBeNull();
  });

  it("numbers concurrent publications of one model without gaps or duplicates", async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        publishPrice({ ctx: t.ctx, input: { model_alias: "m_race", input_units_per_mtok: i, output_units_per_mtok: i, actor } }),
      ),
    );
    expect(results.map((m) => m.price!.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const stored = await listPrices({ ctx: t.ctx, input: { model_alias: "m_race" } });
    expect(stored.map((p) => p.version)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  it("is refused for an unknown model and for negative or fractional units", async () => {
    await expect(publishPrice({ ctx: t.ctx, input: { model_alias: "nope", input_units_per_mtok: 1, output_units_per_mtok: 1, actor } })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(listPrices({ ctx: t.ctx, input: { model_alias: "nope" } })).rejects.toMatchObject({ code: "not_found" });
    for (const units of [-1, "-1", 1.5, "1e3", "99999999999999999999"]) {
      await expect(
        publishPrice({ ctx: t.ctx, input: { model_alias: "m_serial", input_units_per_mtok: units, output_units_per_mtok: 1, actor } }),
        String(units),
      ).rejects.toMatchObject({
        code: "invalid_request",
      });
    }
  });

  it("cannot be changed or deleted, even by SQL that bypasses the service", async () => {
    const sql = (q: string) => t.ctx.prisma.$executeRawUnsafe(q);
    await expect(sql("UPDATE price_versions SET input_units_per_mtok = 1 WHERE model_alias = 'm_serial'")).rejects.toThrow(/immutable: UPDATE/);
    await expect(sql("DELETE FROM price_versions WHERE model_alias = 'm_serial'")).rejects.toThrow(/immutable: DELETE/);
    await expect(sql("TRUNCATE price_versions CASCADE")).rejects.toThrow(/immutable: TRUNCATE/);
    await expect(sql("DELETE FROM models WHERE alias = 'm_serial'")).rejects.toThrow();
    expect(await t.ctx.prisma.priceVersion.count({ where: { modelAlias: "m_serial" } })).toBe(3);
  });
});
