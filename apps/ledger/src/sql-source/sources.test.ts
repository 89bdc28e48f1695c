import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openLedgerConnection, type LedgerConnection } from "../testing/ledger-database.js";
import { type Catalog, catalogDifferences, readCatalog } from "./catalog.js";
import { catalogFromSources, readSources, rolledBack, type SqlSource } from "./sources.js";

// sql/ is the ledger's SQL as the migrations install it: a file edited without a migration
// (pnpm --filter @gateway/ledger run sql:migration <name>), or a migration that changes a
// function, view or trigger without its file, fails here.

let db: LedgerConnection;
let client: pg.Client;
let sources: SqlSource[];
let migrated: Catalog;

beforeAll(async () => {
  db = await openLedgerConnection("gw_test_ledger_sql");
  client = db.client;
  sources = await readSources();
  migrated = await readCatalog(client);
});

afterAll(() => db?.close());

/** The sources with one file's text changed. */
function edited(file: string, edit: (text: string) => string): SqlSource[] {
  expect(sources.map((s) => s.file)).toContain(file);
  return sources.map((s) => (s.file === file ? { file, text: edit(s.text) } : s));
}

describe("sql/", () => {
  it("installs exactly the functions, views and triggers the migrations install", async () => {
    const fromSources = await catalogFromSources(client, sources);
    const differ = catalogDifferences(migrated, fromSources);
    expect(differ, "sql/ and prisma/migrations differ: edit the file in sql/ and run `pnpm --filter @gateway/ledger run sql:migration <name>`").toEqual([]);
    // What the comparison covers: arguments, results, SET options, bodies, views, triggers.
    expect(Object.keys(migrated)).toEqual(
      expect.arrayContaining(["view holds", "view entries", "view ledger_events", "trigger transfers_settlement_valid on transfers"]),
    );
    const apply = Object.entries(migrated).find(([key]) => key.startsWith("function ledger_apply("))![1];
    expect(apply.definition).toContain("SET enable_seqscan TO 'off'");
    expect(apply.definition).toContain("#variable_conflict use_column");
  });

  it("tells a file edited without a migration: a body, a SET option, a view, a trigger", async () => {
    const cases: [string, (text: string) => string, string][] = [
      ["ledger_credit.sql", (t) => t.replace("BEGIN\n", "BEGIN\n  -- a comment in the body is part of it\n"), "function ledger_credit("],
      ["ledger_apply.sql", (t) => t.replace("SET enable_seqscan = off\n", ""), "function ledger_apply("],
      ["entries.sql", (t) => t.replace('WHERE l."units" <> 0;', 'WHERE l."units" > 0;'), "view entries"],
      ["ledger_settlement_valid.sql", (t) => t.replace("'post', 'release')) EXECUTE", "'post')) EXECUTE"), "trigger transfers_settlement_valid"],
    ];
    for (const [file, edit, key] of cases) {
      const differ = catalogDifferences(migrated, await catalogFromSources(client, edited(file, edit)));
      expect(differ, file).toHaveLength(1);
      expect(differ[0]!.startsWith(key), file).toBe(true);
    }
    // Comments outside the statements are the reader's, not the database's.
    const commented = edited("holds.sql", (t) => `-- one more line of explanation\n${t}`);
    expect(catalogDifferences(migrated, await catalogFromSources(client, commented))).toEqual([]);
    // A file gone: its objects are missing.
    const withoutHolds = sources.filter((s) => s.file !== "holds.sql");
    expect(catalogDifferences(migrated, await catalogFromSources(client, withoutHolds))).toEqual(["view holds"]);
  });

  it("tells a migration that changes a function without its file", async () => {
    const afterMigration = await rolledBack(client, async () => {
      await client.query(`ALTER FUNCTION "ledger_credit"(TEXT, TEXT, TEXT, BIGINT, TEXT, TEXT, TEXT, TEXT) RESET enable_seqscan`);
      await client.query(`CREATE FUNCTION "ledger_extra"() RETURNS INTEGER LANGUAGE sql AS 'SELECT 1'`);
      return readCatalog(client);
    });
    const differ = catalogDifferences(afterMigration, await catalogFromSources(client, sources));
    expect(differ).toEqual([expect.stringMatching(/^function ledger_credit\(/), "function ledger_extra()"]);
  });
});
