import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { openCredential, upstreamKeyContext } from "../credentials.js";
import { listUpstreams } from "./list.js";
import { putUpstream } from "./put.js";

const KEY = "sk-domain-test-5f1e2d3c4b5a";
const ROTATED = "sk-domain-rotated-998877";
const actor = "user:usr_op";
let t: TestContext;

beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t?.close());

const base = { provider: "openai", base_url: "http://127.0.0.1:9/v1/", actor };

describe("putUpstream", () => {
  it("creates with version 1, seals the key with the current key id, and audits without it", async () => {
    const created = await putUpstream({ ctx: t.ctx, input: { ...base, id: "up_a", api_key: KEY } });
    expect(created).toEqual({ id: "up_a", version: 1, keyConfigured: true });
    const row = await t.ctx.prisma.upstream.findUniqueOrThrow({ where: { id: "up_a" } });
    expect(row.baseUrl).toBe("http://127.0.0.1:9/v1");
    expect(row.apiKeyKeyId).toBe("k2");
    expect(Buffer.from(row.apiKeyCiphertext!).includes(Buffer.from(KEY))).toBe(false);
    expect(openCredential(t.ctx.keyring, { ciphertext: row.apiKeyCiphertext!, keyId: row.apiKeyKeyId! }, upstreamKeyContext("up_a"))).toBe(KEY);
    const [event] = await t.outbox();
    expect(event).toEqual({
      type: "managed_ai.upstream_changed",
      payload: {
        actor,
        upstream_id: "up_a",
        change: "created",
        key_rotated: true,
        before: null,
        after: { provider: "openai", base_url: "http://127.0.0.1:9/v1", enabled: true, key_configured: true, version: 1 },
      },
    });
  });

  it("keeps the stored key when api_key is omitted, replaces it when sent, and counts versions", async () => {
    const kept = await putUpstream({ ctx: t.ctx, input: { ...base, id: "up_a", enabled: false, version: 1 } });
    expect(kept).toEqual({ id: "up_a", version: 2, keyConfigured: true });
    const before = await t.ctx.prisma.upstream.findUniqueOrThrow({ where: { id: "up_a" } });
    const rotated = await putUpstream({ ctx: t.ctx, input: { ...base, id: "up_a", api_key: ROTATED } });
    expect(rotated.version).toBe(3);
    const after = await t.ctx.prisma.upstream.findUniqueOrThrow({ where: { id: "up_a" } });
    expect(after.enabled).toBe(false);
    expect(Buffer.from(after.apiKeyCiphertext!).equals(Buffer.from(before.apiKeyCiphertext!))).toBe(false);
    expect(openCredential(t.ctx.keyring, { ciphertext: after.apiKeyCiphertext!, keyId: "k2" }, upstreamKeyContext("up_a"))).toBe(ROTATED);
    const events = (await t.outbox()).filter((e) => e.payload.upstream_id === "up_a");
    expect(events.map((e) => [e.payload.change, e.payload.key_rotated])).toEqual([
      ["created", true],
      ["updated", false],
      ["updated", true],
    ]);
  });

  it("answers 409 for a stale version or a version on create, and changes nothing", async () => {
    await expect(putUpstream({ ctx: t.ctx, input: { ...base, id: "up_a", version: 2 } })).rejects.toMatchObject({ code: "conflict" });
    await expect(putUpstream({ ctx: t.ctx, input: { ...base, id: "up_new", version: 1 } })).rejects.toMatchObject({ code: "conflict" });
    expect(await t.ctx.prisma.upstream.findUnique({ where: { id: "up_new" } })).toBeNull();
    expect((await putUpstream({ ctx: t.ctx, input: { ...base, id: "up_new", version: 0 } })).version).toBe(1);
    expect((await t.ctx.prisma.upstream.findUniqueOrThrow({ where: { id: "up_a" } })).version).toBe(3);
  });

  it("lets exactly one of many concurrent writes with the same version win", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => putUpstream({ ctx: t.ctx, input: { ...base, id: "up_a", base_url: `http://127.0.0.1:9/v${i}`, version: 3 } })),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ code: "conflict" });
    expect((await t.ctx.prisma.upstream.findUniqueOrThrow({ where: { id: "up_a" } })).version).toBe(4);
  });

  it("lets exactly one of concurrent first writes of an id win", async () => {
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => putUpstream({ ctx: t.ctx, input: { ...base, id: "up_race", version: 0 } })));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((await t.ctx.prisma.upstream.findUniqueOrThrow({ where: { id: "up_race" } })).version).toBe(1);
  });

  it("validates input, requires an actor, and lists newest first without credentials", async () => {
    for (const input of [
      { ...base, id: "bad id" },
      { ...base, id: "up_x", provider: "anthropic" },
      { ...base, id: "up_x", base_url: "ftp://x" },
      { ...base, id: "up_x", base_url: "https://user:pw@x.example/v1" },
      { ...base, id: "up_x", api_key: "has space" },
      { ...base, id: "up_x", actor: undefined },
    ]) {
      await expect(putUpstream({ ctx: t.ctx, input }), JSON.stringify(input)).rejects.toMatchObject({ code: "invalid_request" });
    }
    const listed = await listUpstreams({ ctx: t.ctx, input: { limit: 0 } });
    expect(listed.map((u) => u.id)).toEqual(["up_race", "up_new", "up_a"]);
    expect(JSON.stringify(listed)).not.toContain("piKey");
    expect(await listUpstreams({ ctx: t.ctx, input: { limit: 1 } })).toHaveLength(1);
  });

  it("never writes a key to the outbox or the log", async () => {
    const everything = JSON.stringify([await t.outbox(), t.logs]);
    expect(everything).not.toContain(KEY);
    expect(everything).not.toContain(ROTATED);
  });
});
