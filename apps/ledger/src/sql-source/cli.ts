#!/usr/bin/env node
// pnpm --filter @gateway/ledger run sql:migration <name>
//
// Writes prisma/migrations/<timestamp>_<name>/migration.sql from the files of sql/ that
// differ from what the migrations install (apps/ledger/sql/README.md). Uses a scratch
// database on the PostgreSQL server of DATABASE_URL, dropped afterwards.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { z } from "zod";
import { env, loadEnv } from "@gateway/config";
import { connectionConfig, dropDatabase, prepareDatabase } from "@gateway/db-kit";
import { nextMigrationName, planSqlMigration, writeSqlMigration } from "./create-migration.js";
import { readSources, SQL_DIR } from "./sources.js";

const CliEnv = z.object({
  DATABASE_URL: env.secret("PostgreSQL server URL (a scratch database is created and dropped there).", "postgresql://postgres@127.0.0.1:5432/postgres"),
});

const PRISMA_DIR = join(SQL_DIR, "..", "prisma");
const MIGRATIONS_DIR = join(PRISMA_DIR, "migrations");

async function main(argv: string[]): Promise<number> {
  const [name] = argv;
  if (!name || name.startsWith("-")) {
    console.error("Usage: pnpm --filter @gateway/ledger run sql:migration <name>\n\nWrites a migration from the files of apps/ledger/sql/ that changed.");
    return 2;
  }
  const dirName = await nextMigrationName(MIGRATIONS_DIR, name);
  const { DATABASE_URL } = loadEnv(CliEnv, process.env);
  const scratch = `gw_tmp_ledger_sql_${randomBytes(4).toString("hex")}`;
  const url = await prepareDatabase({
    serverUrl: DATABASE_URL,
    name: scratch,
    schemaPath: join(PRISMA_DIR, "schema.prisma"),
    migrationsDir: MIGRATIONS_DIR,
    migrate: true,
  });
  const client = new pg.Client(connectionConfig(url));
  try {
    await client.connect();
    const migration = await planSqlMigration(client, await readSources());
    if (!migration) {
      console.log("sql/ and prisma/migrations agree: no migration written");
      return 0;
    }
    const path = await writeSqlMigration(MIGRATIONS_DIR, dirName, migration);
    console.log(`wrote ${path}`);
    if (migration.files.length) console.log(`  from ${migration.files.map((f) => `sql/${f}`).join(", ")}`);
    if (migration.removed.length) console.log(`  dropping ${migration.removed.join(", ")}`);
    return 0;
  } finally {
    await client.end();
    await dropDatabase(DATABASE_URL, scratch);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
