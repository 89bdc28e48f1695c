import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseUrl, dropDatabase, ensureDatabase, Migrator } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { createDatabase, type LedgerDatabase } from "./db.js";
import type { LedgerContext } from "./domain/context.js";
import { postAllotment } from "./domain/allotment/post.js";
import { createCredit } from "./domain/credit/create.js";
import { captureHold } from "./domain/hold/capture.js";
import { getHold } from "./domain/hold/get.js";
import { reserveHold } from "./domain/hold/reserve.js";
import { voidHold } from "./domain/hold/void.js";
import { getBalance } from "./domain/balance/get.js";
import { listEntries } from "./domain/entry/list.js";
import { requestHash } from "./domain/fingerprint.js";
import { checkInvariant } from "./domain/invariant/check.js";
import { poolMovements } from "./domain/movement-queue.js";
import { PRISMA_DIR, SERVER_URL } from "./testing/ledger-database.js";

const name = `gw_test_ledger_mig_${randomBytes(4).toString("hex")}`;
const url = databaseUrl(SERVER_URL, name);
let firstOnly: string;
let db: LedgerDatabase | undefined;

beforeAll(async () => {
  await ensureDatabase(SERVER_URL, name);
  firstOnly = await mkdtemp(join(tmpdir(), "ledger-migrations-"));
  const [init] = (await readdir(join(PRISMA_DIR, "migrations"))).filter((d) => d.endsWith("_init"));
  await cp(join(PRISMA_DIR, "migrations", init!), join(firstOnly, init!), { recursive: true });
  await cp(join(PRISMA_DIR, "migrations", "migration_lock.toml"), join(firstOnly, "migration_lock.toml"));
});

afterAll(async () => {
  await db?.prisma.$disconnect();
  await dropDatabase(SERVER_URL, name);
  await rm(firstOnly, { recursive: true, force: true });
});

async function deploy(migrationsDir: string): Promise<string[]> {
  const m = await Migrator.open({ url, schemaPath: join(PRISMA_DIR, "schema.prisma"), migrationsDir });
  try {
    return await m.deploy();
  } finally {
    await m.close();
  }
}

describe("migrations", () => {
  it("convert the credits of the first schema in place: balances, journal and retries keep working", async () => {
    expect(await deploy(firstOnly)).toHaveLength(1);
    db = createDatabase(url, 2);
    const prisma = db.prisma;
    // What the first schema's createCredit wrote: two tenant accounts per tenant, system accounts, credits.
    await prisma.$executeRawUnsafe(`INSERT INTO accounts (id, tenant_id, kind, balance) VALUES
      ('available:t1', 't1', 'available', 300), ('held:t1', 't1', 'held', 0),
      ('available:t2', 't2', 'available', 5), ('held:t2', 't2', 'held', 0),
      ('funding:system', NULL, 'funding', 0), ('revenue:system', NULL, 'revenue', 0)`);
    await prisma.$executeRawUnsafe(`INSERT INTO transfers (id, operation_id, kind, tenant_id, units, reason, created_at) VALUES
      ('trf_a', 'credit:t1:k1', 'credit', 't1', 100, 'first', '2026-01-01T00:00:00Z'),
      ('trf_b', 'credit:t1:k2', 'credit', 't1', 200, 'second; with punctuation', '2026-01-02T00:00:00Z'),
      ('trf_c', 'credit:t2:k1', 'credit', 't2', 5, 'x', '2026-01-01T12:00:00Z')`);
    await prisma.$executeRawUnsafe(`INSERT INTO entries (transfer_id, account_id, units) VALUES
      ('trf_a', 'funding:system', -100), ('trf_a', 'available:t1', 100),
      ('trf_b', 'funding:system', -200), ('trf_b', 'available:t1', 200),
      ('trf_c', 'funding:system', -5), ('trf_c', 'available:t2', 5)`);
    await prisma.$disconnect();

    expect((await deploy(join(PRISMA_DIR, "migrations"))).length).toBeGreaterThan(0);
    db = createDatabase(url, 2);
    const relay = { kick() {} };
    const ctx: LedgerContext = { ...db, relay, movements: poolMovements(db.pool, relay), logger: createLogger({ service: "ledger-test", level: "silent" }) };

    expect(await checkInvariant({ ctx, input: { all_tenants: true } })).toMatchObject({
      ok: true,
      journalSum: 0n,
      tenants: [
        { tenantId: "t1", credits: 300n, available: 300n, held: 0n },
        { tenantId: "t2", credits: 5n, available: 5n, held: 0n },
      ],
    });
    // A retry of a converted credit replays it; other parameters conflict.
    expect(await createCredit({ ctx, input: { operation_id: "credit:t1:k2", tenant_id: "t1", units: "200", reason: "second; with punctuation" } })).toEqual({
      entryId: "trf_b",
      balance: { tenantId: "t1", available: 300n, held: 0n },
      replayed: true,
    });
    await expect(createCredit({ ctx, input: { operation_id: "credit:t1:k2", tenant_id: "t1", units: "200", reason: "other" } })).rejects.toMatchObject({
      code: "conflict",
    });
    // New movements continue the sequence after the converted ones.
    await reserveHold({ ctx, input: { operation_id: "r", tenant_id: "t1", units: "50", ttl_seconds: 60 } });
    const seqs = await db.prisma.$queryRawUnsafe<{ operation_id: string; seq: bigint }[]>("SELECT operation_id, seq FROM transfers ORDER BY seq");
    expect(seqs.map((r) => r.operation_id)).toEqual(["credit:t1:k1", "credit:t2:k1", "credit:t1:k2", "r"]);
    expect((await checkInvariant({ ctx, input: { all_tenants: true } })).ok).toBe(true);
  });

  it("convert the holds, journal and outbox of the previous schema in place: balances, open holds, replays and events keep working", async () => {
    const name2 = `gw_test_ledger_mig2_${randomBytes(4).toString("hex")}`;
    const url2 = databaseUrl(SERVER_URL, name2);
    const before = await mkdtemp(join(tmpdir(), "ledger-migrations-"));
    await ensureDatabase(SERVER_URL, name2);
    let db2: LedgerDatabase | undefined;
    try {
      // Every migration before the pending/posted one.
      const all = (await readdir(join(PRISMA_DIR, "migrations"))).filter((d) => /^\d+_/.test(d)).sort();
      const cut = all.findIndex((d) => d.endsWith("_ledger_pending_posted"));
      for (const d of all.slice(0, cut)) await cp(join(PRISMA_DIR, "migrations", d), join(before, d), { recursive: true });
      await cp(join(PRISMA_DIR, "migrations", "migration_lock.toml"), join(before, "migration_lock.toml"));
      const deployTo = async (dir: string) => {
        const m = await Migrator.open({ url: url2, schemaPath: join(PRISMA_DIR, "schema.prisma"), migrationsDir: dir });
        try {
          return await m.deploy();
        } finally {
          await m.close();
        }
      };
      expect(await deployTo(before)).toHaveLength(cut);
      db2 = createDatabase(url2, 2);
      const q = (text: string, ...values: unknown[]) => db2!.prisma.$queryRawUnsafe<Record<string, unknown>[]>(text, ...values);
      // What the previous functions wrote: credits, holds (open, captured, voided), legs, outbox rows.
      await q("SELECT * FROM ledger_credit('old:credit', 'h-credit', 'm1', 1000, 'funds', 'trf_c1', 'evt_c1', NULL)");
      const apply = (kind: string, op: string, tenant: string | null, hold: string | null, units: number | null, newHold: string | null, trf: string) =>
        q(
          `SELECT * FROM ledger_apply(ARRAY[$1], ARRAY[$2], ARRAY[$8], ARRAY[$3]::text[], ARRAY[$4]::text[], ARRAY[$5]::bigint[], ARRAY[NULL]::timestamptz[], ARRAY[900],
             ARRAY[''], ARRAY[$6]::text[], ARRAY[$7], ARRAY['evt_' || $7], ARRAY[NULL]::text[])`,
          kind,
          op,
          tenant,
          hold,
          units,
          newHold,
          trf,
          kind === "reserve" ? requestHash(["reserve", tenant!, String(units), "ttl:900", ""]) : `h-${op}`,
        );
      await apply("reserve", "old:r1", "m1", null, 300, "hold_o1", "trf_r1");
      await apply("reserve", "old:r2", "m1", null, 200, "hold_o2", "trf_r2");
      await apply("reserve", "old:r3", "m1", null, 100, "hold_o3", "trf_r3");
      await apply("capture", "old:c1", null, "hold_o1", 120, null, "trf_s1");
      await apply("void", "old:v2", null, "hold_o2", null, null, "trf_s2");
      const oldHold3 = (await q("SELECT expires_at, created_at FROM holds WHERE id = 'hold_o3'"))[0]!;
      const oldEntries = await q("SELECT transfer_id, leg, account, units FROM entries ORDER BY transfer_id, leg");
      expect(oldEntries.length).toBe(13);
      expect(await q("SELECT count(*)::int AS n FROM outbox_events")).toEqual([{ n: 6 }]);
      await db2.prisma.$disconnect();

      expect(await deployTo(join(PRISMA_DIR, "migrations"))).toHaveLength(all.length - cut);
      db2 = createDatabase(url2, 2);
      const relay = { kick() {} };
      const ctx: LedgerContext = {
        ...db2,
        relay,
        movements: poolMovements(db2.pool, relay),
        logger: createLogger({ service: "ledger-test", level: "silent" }),
      };

      // Balances preserved exactly; the account carries them as pending/posted debits and credits.
      expect(await getBalance({ ctx, input: { tenant_id: "m1" } })).toEqual({ tenantId: "m1", available: 780n, held: 100n });
      expect(await q("SELECT debits_pending::int AS dp, debits_posted::int AS dpo, credits_posted::int AS cpo FROM accounts WHERE tenant_id = 'm1'")).toEqual([
        { dp: 100, dpo: 120, cpo: 1000 },
      ]);
      // The legs the view derives are the legs that were stored.
      expect(await q("SELECT transfer_id, leg, account, units FROM entries ORDER BY transfer_id, leg")).toEqual(oldEntries);
      expect(await checkInvariant({ ctx, input: { all_tenants: true } })).toMatchObject({ ok: true, journalSum: 0n, unbalancedTransfers: 0n });
      // Holds as they were; the open one still settles exactly once, the others refuse.
      expect(await getHold({ ctx, input: { hold_id: "hold_o3" } })).toMatchObject({
        status: "open",
        units: 100n,
        expiresAt: oldHold3.expires_at,
        createdAt: oldHold3.created_at,
      });
      expect(await getHold({ ctx, input: { hold_id: "hold_o1" } })).toMatchObject({ status: "captured", capturedUnits: 120n, releasedUnits: 180n });
      await expect(voidHold({ ctx, input: { operation_id: "new:v1", hold_id: "hold_o1" } })).rejects.toMatchObject({ code: "conflict" });
      const settled = await captureHold({ ctx, input: { operation_id: "new:c3", hold_id: "hold_o3", units: "40" } });
      expect(settled).toMatchObject({ replayed: false, balance: { available: 840n, held: 0n }, hold: { status: "captured", capturedUnits: 40n } });
      await expect(voidHold({ ctx, input: { operation_id: "new:v3", hold_id: "hold_o3" } })).rejects.toMatchObject({ code: "conflict" });
      // Retries of operations stored before the migration replay them.
      const replay = await reserveHold({ ctx, input: { operation_id: "old:r1", tenant_id: "m1", units: "300", ttl_seconds: 900, reason: "" } });
      expect(replay).toMatchObject({ replayed: true, holdId: "hold_o1", entryId: "trf_r1", balance: { available: 700n, held: 300n } });
      // The old events stay with the outbox relay; the tail starts after them.
      expect(await q("SELECT position::int AS p FROM relay_checkpoints WHERE name = 'ledger_events'")).toEqual([{ p: 6 }]);
      expect(await q("SELECT count(*)::int AS n FROM ledger_events WHERE seq > 6")).toEqual([{ n: 1 }]);
      expect((await listEntries({ ctx, input: { tenant_id: "m1" } })).entries.map((e) => e.operationId)).toEqual([
        "new:c3",
        "old:v2",
        "old:c1",
        "old:r3",
        "old:r2",
        "old:r1",
        "old:credit",
      ]);
      expect(await checkInvariant({ ctx, input: { all_tenants: true } })).toMatchObject({ ok: true });
      // Holds converted before allotments existed are none; allotments work beside them.
      expect(await getHold({ ctx, input: { hold_id: "hold_o1" } })).toMatchObject({ allotment: false, releasedUnits: 180n });
      const allotment = await reserveHold({ ctx, input: { operation_id: "new:a", tenant_id: "m1", units: "500", ttl_seconds: 60, allotment: true } });
      expect(await postAllotment({ ctx, input: { operation_id: "new:p", hold_id: allotment.holdId, units: "80" } })).toMatchObject({
        balance: { available: 340n, held: 420n },
        hold: { allotment: true, capturedUnits: 80n },
      });
      await expect(postAllotment({ ctx, input: { operation_id: "new:p2", hold_id: "hold_o3", units: "1" } })).rejects.toMatchObject({
        code: "invalid_request",
      });
      await expect(postAllotment({ ctx, input: { operation_id: "new:p3", hold_id: "hold_o9", units: "1" } })).rejects.toMatchObject({ code: "not_found" });
      expect(await checkInvariant({ ctx, input: { all_tenants: true } })).toMatchObject({ ok: true });
    } finally {
      await db2?.prisma.$disconnect();
      await dropDatabase(SERVER_URL, name2);
      await rm(before, { recursive: true, force: true });
    }
  });
});
