import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseUrl, dropDatabase, ensureDatabase, Migrator } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { createDatabase, type LedgerContext, type LedgerDatabase } from "./db.js";
import { createCredit } from "./domain/credit/create.js";
import { reserveHold } from "./domain/hold/reserve.js";
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

    expect(await checkInvariant({ ctx, input: {} })).toMatchObject({
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
    expect((await checkInvariant({ ctx, input: {} })).ok).toBe(true);
  });
});
