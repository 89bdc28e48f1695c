import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openLedgerConnection, type LedgerConnection } from "../testing/ledger-database.js";
import { catalogDifferences, readCatalog } from "./catalog.js";
import { nextMigrationName, planSqlMigration } from "./create-migration.js";
import { catalogFromSources, readSources, rolledBack, type SqlSource } from "./sources.js";

let db: LedgerConnection;
let client: pg.Client;
let sources: SqlSource[];

beforeAll(async () => {
  db = await openLedgerConnection("gw_test_ledger_sqlmig");
  client = db.client;
  sources = await readSources();
});

afterAll(() => db?.close());

const edit = (file: string, fn: (text: string) => string) => sources.map((s) => (s.file === file ? { file, text: fn(s.text) } : s));

describe("planSqlMigration", () => {
  it("writes nothing when sql/ and the migrations agree", async () => {
    expect(await planSqlMigration(client, sources)).toBeNull();
  });

  it("runs the changed files whole, drops a view whose columns change, and drops what no file defines", async () => {
    const changed = edit("ledger_credit.sql", (t) => t.replace("BEGIN\n", "BEGIN\n  -- changed\n"))
      .map((s) => (s.file === "holds.sql" ? { file: s.file, text: s.text.replace('r."tenant_id", r."units",', 'r."units", r."tenant_id",') } : s))
      .filter((s) => s.file !== "ledger_append_only.sql");
    const migration = (await planSqlMigration(client, changed))!;
    expect(migration.files).toEqual(["holds.sql", "ledger_credit.sql"]);
    expect(migration.removed).toEqual(["function ledger_append_only()", "trigger transfers_append_only on transfers"]);
    expect(migration.sql).toContain("DROP VIEW holds;\n-- Holds, derived from the journal");
    expect(migration.sql.indexOf("DROP TRIGGER transfers_append_only ON transfers;")).toBeLessThan(
      migration.sql.indexOf("DROP FUNCTION ledger_append_only();"),
    );
    // Applied, it leaves the files' catalog: the check passes.
    const after = await rolledBack(client, async () => {
      await client.query(migration.sql);
      return readCatalog(client);
    });
    expect(catalogDifferences(after, await catalogFromSources(client, changed))).toEqual([]);
  });
});

describe("nextMigrationName", () => {
  it("stamps now, or one second after the newest migration when now is not after it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ledger-sql-"));
    try {
      await mkdir(join(dir, "20261125190000_ledger_allotments_lean"));
      expect(await nextMigrationName(dir, "Fix apply", new Date("2026-11-25T18:00:00Z"))).toBe("20261125190001_fix_apply");
      expect(await nextMigrationName(dir, "fix", new Date("2026-11-26T08:30:00Z"))).toBe("20261126083000_fix");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
