import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectionConfig, databaseUrl, dropDatabase, ensureDatabase, Migrator, migrationName } from "./index.js";

const SERVER = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const run = promisify(execFile);

const header = `datasource db {
  provider = "postgresql"
}

generator client {
  provider = "prisma-client"
  output   = "../src/generated/prisma"
}
`;
const v1 = `${header}
model Account {
  id        String @id
  available BigInt @default(0)
}
`;
const v2 = `${v1}
model Entry {
  id        String @id
  accountId String @map("account_id")
  amount    BigInt

  @@index([accountId])
  @@map("entries")
}
`;

let dir: string;
let dbName: string;
let url: string;

async function withMigrator<T>(fn: (m: Migrator) => Promise<T>): Promise<T> {
  const m = await Migrator.open({ url, schemaPath: join(dir, "schema.prisma"), migrationsDir: join(dir, "migrations") });
  try {
    return await fn(m);
  } finally {
    await m.close();
  }
}

async function sql<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const c = new pg.Client(connectionConfig(url));
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "gw-migrate-"));
  dbName = `gw_test_dbkit_${randomBytes(4).toString("hex")}`;
  url = databaseUrl(SERVER, dbName);
  expect(await ensureDatabase(SERVER, dbName)).toBe("created");
});

afterAll(async () => {
  await dropDatabase(SERVER, dbName);
  await rm(dir, { recursive: true, force: true });
});

describe("ensureDatabase", () => {
  it("is idempotent and safe under a race", async () => {
    const name = `${dbName}_race`;
    try {
      const results = await Promise.all(Array.from({ length: 5 }, () => ensureDatabase(SERVER, name)));
      expect(results.filter((r) => r === "created")).toHaveLength(1);
      expect(await ensureDatabase(SERVER, name)).toBe("exists");
    } finally {
      await dropDatabase(SERVER, name);
    }
  });

  it("refuses names that would need quoting", async () => {
    await expect(ensureDatabase(SERVER, 'x"; DROP DATABASE postgres; --')).rejects.toThrow(/invalid database name/);
  });
});

describe("Migrator", () => {
  it("creates the first migration from the schema, with a lockfile", async () => {
    await writeFile(join(dir, "schema.prisma"), v1);
    const created = await withMigrator((m) => m.create("init", new Date("2026-01-02T03:04:05Z")));
    expect(created?.name).toBe("20260102030405_init");
    expect(created?.sql).toContain('CREATE TABLE "Account"');
    expect(await readFile(join(dir, "migrations", "20260102030405_init", "migration.sql"), "utf8")).toBe(created?.sql);
    expect(await readFile(join(dir, "migrations", "migration_lock.toml"), "utf8")).toContain('provider = "postgresql"');
  });

  it("creates nothing when the schema has no changes", async () => {
    expect(await withMigrator((m) => m.create("again"))).toBeNull();
    expect(await withMigrator((m) => m.pendingSchemaChanges())).toBe("");
  });

  it("reports unapplied migrations as pending, then deploys them once", async () => {
    expect((await withMigrator((m) => m.status())).pending).toEqual(["20260102030405_init"]);
    expect(await withMigrator((m) => m.deploy())).toEqual(["20260102030405_init"]);
    expect(await withMigrator((m) => m.deploy())).toEqual([]);
    const rows = await sql<{ migration_name: string }>("SELECT migration_name FROM _prisma_migrations");
    expect(rows.map((r) => r.migration_name)).toEqual(["20260102030405_init"]);
    expect(await withMigrator((m) => m.status())).toEqual({ pending: [], edited: [], failed: [], unknown: [], drift: "" });
  });

  it("sees a schema change that no migration holds, and creates it", async () => {
    await writeFile(join(dir, "schema.prisma"), v2);
    const missing = await withMigrator((m) => m.pendingSchemaChanges());
    expect(missing).toContain('CREATE TABLE "entries"');
    const created = await withMigrator((m) => m.create("entries", new Date("2026-01-03T00:00:00Z")));
    expect(created?.sql).toContain('CREATE INDEX "entries_account_id_idx"');
    expect(await withMigrator((m) => m.deploy())).toEqual(["20260103000000_entries"]);
  });

  it("detects drift: a change made to the database by hand", async () => {
    await sql('ALTER TABLE "entries" ADD COLUMN "note" TEXT');
    const status = await withMigrator((m) => m.status());
    expect(status.drift).toContain('"note"');
    await sql('ALTER TABLE "entries" DROP COLUMN "note"');
    expect((await withMigrator((m) => m.status())).drift).toBe("");
  });

  it("detects a migration edited after it was applied", async () => {
    const file = join(dir, "migrations", "20260103000000_entries", "migration.sql");
    const original = await readFile(file, "utf8");
    await writeFile(file, `${original}\n-- sneaky edit\n`);
    expect((await withMigrator((m) => m.status())).edited).toEqual(["20260103000000_entries"]);
    await writeFile(file, original);
  });

  it("names migrations with a UTC timestamp and a slug", () => {
    expect(migrationName("Add Holds!", new Date("2026-11-21T10:20:30Z"))).toBe("20261121102030_add_holds");
    expect(() => migrationName("!!!")).toThrow(/needs a name/);
  });

  it("leaves no shadow database behind", async () => {
    // Only this process's: other runs on the same server may be migrating right now.
    const rows = await sql<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE 'gw\\_shadow\\_${process.pid}\\_%' OR datname LIKE 'prisma_migrate_shadow_db_%'`,
    );
    expect(rows).toEqual([]);
  });
});

describe("gateway-migrate CLI", () => {
  const cli = join(import.meta.dirname, "..", "dist", "cli.js");
  const exec = (args: string[]) =>
    run(process.execPath, [cli, ...args, "--prisma-dir", dir], { env: { ...process.env, DATABASE_URL: SERVER, DATABASE_NAME: dbName } }).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );

  it("check passes when schema and migrations agree and fails with the missing SQL otherwise", async () => {
    expect(existsSync(cli)).toBe(true);
    expect(await exec(["check"])).toMatchObject({ code: 0 });
    await writeFile(join(dir, "schema.prisma"), v2.replace("amount    BigInt", "amount    BigInt\n  memo      String?"));
    const failed = await exec(["check"]);
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('ADD COLUMN     "memo" TEXT');
    await writeFile(join(dir, "schema.prisma"), v2);
  });

  it("status fails on a pending migration and deploy applies it", async () => {
    const name = "20260104000000_pending";
    await (await import("node:fs/promises")).mkdir(join(dir, "migrations", name));
    await writeFile(join(dir, "migrations", name, "migration.sql"), 'CREATE TABLE "extra" ("id" TEXT PRIMARY KEY);\n');
    const status = await exec(["status"]);
    expect(status.code).toBe(1);
    expect(status.out).toContain(`pending: ${name}`);
    expect(await exec(["deploy"])).toMatchObject({ code: 0, out: expect.stringContaining(`applied ${name}`) });
    expect(await exec(["deploy"])).toMatchObject({ code: 0, out: expect.stringContaining("up to date") });
    expect((await readdir(join(dir, "migrations"))).length).toBe(4);
  });
});

describe("hand-written migration SQL", () => {
  it("applies dollar-quoted bodies (functions, triggers) and CHECK constraints, in shadow and real databases alike", async () => {
    const ownDir = await mkdtemp(join(tmpdir(), "gw-migrate-fn-"));
    const ownDb = `${dbName}_fn`;
    const ownUrl = databaseUrl(SERVER, ownDb);
    await ensureDatabase(SERVER, ownDb);
    try {
      await writeFile(join(ownDir, "schema.prisma"), v1);
      const open = () => Migrator.open({ url: ownUrl, schemaPath: join(ownDir, "schema.prisma"), migrationsDir: join(ownDir, "migrations") });
      let m = await open();
      const created = await m.create("init", new Date("2026-01-02T03:04:05Z"));
      await m.close();
      const file = join(ownDir, "migrations", created!.name, "migration.sql");
      await writeFile(
        file,
        `${created!.sql}
CREATE FUNCTION "no_update"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'no %; ever', TG_OP;
END;
$$;
CREATE TRIGGER "account_no_update" BEFORE UPDATE ON "Account" FOR EACH ROW EXECUTE FUNCTION "no_update"();
ALTER TABLE "Account" ADD CONSTRAINT "account_available_check" CHECK ("available" >= 0);
`,
      );
      m = await open();
      try {
        expect(await m.pendingSchemaChanges()).toBe("");
        expect(await m.deploy()).toEqual([created!.name]);
        expect((await m.status()).drift).toBe("");
      } finally {
        await m.close();
      }
      const c = new pg.Client(connectionConfig(ownUrl));
      await c.connect();
      try {
        await c.query(`INSERT INTO "Account" (id) VALUES ('a')`);
        await expect(c.query(`INSERT INTO "Account" (id, available) VALUES ('b', -1)`)).rejects.toThrow("account_available_check");
        await expect(c.query(`UPDATE "Account" SET available = 1`)).rejects.toThrow("no UPDATE; ever");
      } finally {
        await c.end();
      }
    } finally {
      await dropDatabase(SERVER, ownDb);
      await rm(ownDir, { recursive: true, force: true });
    }
  });
});
