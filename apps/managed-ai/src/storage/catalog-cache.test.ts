import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Broadcast, connectNats, type NatsConnection } from "@gateway/events-runtime";
import { createLogger } from "@gateway/logger";
import type { PrismaClient } from "../generated/prisma/client.js";
import { createTestContext, type TestContext } from "../testing/context.js";
import { putInstance } from "../domain/instances/put.js";
import { putModel } from "../domain/models/put.js";
import { putOffer } from "../domain/offers/put.js";
import { publishPrice } from "../domain/prices/publish.js";
import { putUpstream } from "../domain/upstreams/put.js";
import { CatalogCache } from "./catalog-cache.js";

const actor = "user:usr_op";
const logger = createLogger({ service: "managed-ai-test", level: "silent" });
let t: TestContext;
let nc: NatsConnection;

beforeAll(async () => {
  // Cached for a minute: only invalidation can make a change visible within a test.
  t = await createTestContext({}, { catalogTtlMs: 60_000 });
  nc = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", "catalog-test");
  await putUpstream({ ctx: t.ctx, input: { id: "up", provider: "openai", base_url: "http://x.example/v1", actor } });
  await putModel({ ctx: t.ctx, input: { alias: "m", upstream_id: "up", upstream_model: "gpt-x", actor } });
  await publishPrice({ ctx: t.ctx, input: { model_alias: "m", input_units_per_mtok: 100, output_units_per_mtok: 200, actor } });
});
afterAll(async () => {
  await nc?.drain();
  await t?.close();
});

const priceOf = async (cache: CatalogCache) => (await cache.model("m", "ten_cat"))?.prices[0]?.version;

describe("CatalogCache", () => {
  it("serves a cached model until a write on this replica commits, then the new price at once", async () => {
    const cache = t.ctx.catalog;
    expect(await priceOf(cache)).toBe(1);
    // A change that bypasses the service's transactions is not seen: the cache is really in use.
    await t.ctx.prisma.$executeRawUnsafe("UPDATE models SET enabled = false WHERE alias = 'm'");
    expect((await cache.model("m", "ten_cat"))?.enabled).toBe(true);
    await t.ctx.prisma.$executeRawUnsafe("UPDATE models SET enabled = true WHERE alias = 'm'");

    await publishPrice({ ctx: t.ctx, input: { model_alias: "m", input_units_per_mtok: 150, output_units_per_mtok: 250, actor } });
    expect(await priceOf(cache)).toBe(2);
    await putOffer({ ctx: t.ctx, input: { tenant_id: "ten_cat", model_alias: "m", discount_bps: 1000, actor } });
    expect((await cache.model("m", "ten_cat"))?.offers.map((o) => o.discountBps)).toEqual([1000]);
    await putInstance({ ctx: t.ctx, input: { actor, tenant_id: "ten_cat", alias: "chat", status: "active", mode: "managed", default_model: "m" } });
    expect((await cache.instance("ten_cat", "chat"))?.status).toBe("active");
    await putInstance({ ctx: t.ctx, input: { actor, tenant_id: "ten_cat", alias: "chat", status: "disabled", mode: "managed", default_model: "m" } });
    expect((await cache.instance("ten_cat", "chat"))?.status).toBe("disabled");
  });

  it("empties another replica's cache through the broadcast", async () => {
    const subject = `gw.test.catalog.${randomBytes(4).toString("hex")}`;
    const here = new CatalogCache(t.ctx.prisma, 60_000, new Broadcast(nc, subject, logger));
    const there = new CatalogCache(t.ctx.prisma, 60_000, new Broadcast(nc, subject, logger));
    there.listen();
    await nc.flush();
    const before = await priceOf(there);
    await t.ctx.prisma.$executeRawUnsafe(
      "INSERT INTO price_versions (id, model_alias, version, input_units_per_mtok, output_units_per_mtok, created_by) SELECT 'price_cat_direct', 'm', max(version) + 1, 1, 1, 'test' FROM price_versions WHERE model_alias = 'm'",
    );
    expect(await priceOf(there)).toBe(before); // still cached
    here.changed(); // what a committed write on the other replica does
    const until = Date.now() + 5_000;
    while ((await priceOf(there)) === before && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(await priceOf(there)).toBe(before! + 1);
  });

  it("does not keep a load that raced a flush (it may have read the old catalog)", async () => {
    let loads = 0;
    let release!: () => void;
    const prisma = {
      serviceInstance: {
        findUnique: async () => {
          loads++;
          if (loads === 1) await new Promise<void>((r) => (release = r));
          return { id: `inst_${loads}` };
        },
      },
    } as unknown as PrismaClient;
    const cache = new CatalogCache(prisma, 60_000);
    const first = cache.instance("t", "a");
    await new Promise((r) => setTimeout(r, 10));
    cache.flush();
    release();
    expect(await first).toEqual({ id: "inst_1" });
    expect(await cache.instance("t", "a")).toEqual({ id: "inst_2" });
    expect(await cache.instance("t", "a")).toEqual({ id: "inst_2" });
    expect(loads).toBe(2);
  });

  it("loads a key once for every request that misses while the load is under way, and afresh after a flush", async () => {
    let loads = 0;
    const releases: (() => void)[] = [];
    const prisma = {
      serviceInstance: {
        findUnique: async () => {
          const n = ++loads;
          await new Promise<void>((r) => releases.push(r));
          return { id: `inst_${n}` };
        },
      },
    } as unknown as PrismaClient;
    const cache = new CatalogCache(prisma, 60_000);
    const herd = Array.from({ length: 20 }, () => cache.instance("t", "a"));
    const other = cache.instance("t", "b"); // another key loads on its own
    await new Promise((r) => setTimeout(r, 10));
    expect(loads).toBe(2);
    cache.flush(); // a write committed: callers from now on must not get the load under way
    const afterFlush = cache.instance("t", "a");
    await new Promise((r) => setTimeout(r, 10));
    expect(loads).toBe(3);
    for (const release of releases) release();
    expect(new Set((await Promise.all(herd)).map((v) => v?.id))).toEqual(new Set(["inst_1"]));
    expect(await other).toEqual({ id: "inst_2" });
    expect(await afterFlush).toEqual({ id: "inst_3" });
    expect(await cache.instance("t", "a")).toEqual({ id: "inst_3" });
    expect(loads).toBe(3);
  });
});
