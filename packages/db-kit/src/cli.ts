#!/usr/bin/env node
// gateway-migrate: Prisma migrations for one service, without the native engine.
//
//   gateway-migrate create <name>  write a migration for the schema's changes
//   gateway-migrate deploy         apply pending migrations (creates the database)
//   gateway-migrate check          fail when schema.prisma has changes no migration holds
//   gateway-migrate status         fail when the database is behind, edited, failed or drifted
//
// Options: --prisma-dir <dir> (default ./prisma). Environment: DATABASE_URL (server),
// DATABASE_NAME (the service's database; needed by deploy and status).
import { resolve } from "node:path";
import { z } from "zod";
import { loadEnv, env } from "@gateway/config";
import { databaseUrl, ensureDatabase } from "./database.js";
import { MigrationError, Migrator } from "./migrate.js";

const cliEnv = z.object({
  DATABASE_URL: env.secret("PostgreSQL server URL.", "postgresql://postgres@127.0.0.1:5432/postgres"),
  DATABASE_NAME: z.string().optional().describe("The service's database."),
});

const USAGE = `Usage: gateway-migrate <command> [--prisma-dir <dir>]

Prisma migrations of one service, without Prisma's native engine.
  create <name>  write prisma/migrations/<timestamp>_<name>/ for the schema's changes
  deploy         apply pending migrations (creates the database)
  check          exit 1 when schema.prisma has changes no migration holds
  status         exit 1 when the database is behind, edited, failed or drifted

Options: --prisma-dir <dir> (default ./prisma).
Environment: DATABASE_URL (server), DATABASE_NAME (the service's database; deploy, status).`;

function usage(): never {
  console.error(USAGE);
  process.exit(2);
}

async function main(argv: string[]): Promise<number> {
  const args = [...argv];
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  let prismaDir = "prisma";
  const at = args.indexOf("--prisma-dir");
  if (at >= 0) {
    prismaDir = args[at + 1] ?? usage();
    args.splice(at, 2);
  }
  const [command, name] = args;
  const cfg = loadEnv(cliEnv, process.env);
  const needsOwnDb = command === "deploy" || command === "status";
  if (needsOwnDb && !cfg.DATABASE_NAME) {
    console.error(`${command} needs DATABASE_NAME (the service's database)`);
    return 2;
  }
  // create and check only use throw-away shadow databases; any database will do to start from.
  const dbName = cfg.DATABASE_NAME ?? "postgres";
  if (needsOwnDb) await ensureDatabase(cfg.DATABASE_URL, dbName);
  const dir = resolve(prismaDir);
  const migrator = await Migrator.open({
    url: databaseUrl(cfg.DATABASE_URL, dbName),
    schemaPath: resolve(dir, "schema.prisma"),
    migrationsDir: resolve(dir, "migrations"),
  });
  try {
    switch (command) {
      case "create": {
        if (!name) usage();
        const created = await migrator.create(name);
        console.log(created ? `created migrations/${created.name}/migration.sql\n\n${created.sql}` : "no schema changes: nothing to create");
        return 0;
      }
      case "deploy": {
        const applied = await migrator.deploy();
        console.log(applied.length ? `applied ${applied.join(", ")}` : "database is up to date");
        return 0;
      }
      case "check": {
        const sql = await migrator.pendingSchemaChanges();
        if (!sql) {
          console.log("schema.prisma and migrations agree");
          return 0;
        }
        console.error(`schema.prisma has changes no migration holds; run \`gateway-migrate create <name>\`:\n\n${sql}`);
        return 1;
      }
      case "status": {
        const s = await migrator.status();
        const problems = [
          ...s.pending.map((m) => `pending: ${m}`),
          ...s.edited.map((m) => `edited after it was applied: ${m}`),
          ...s.failed.map((m) => `failed: ${m}`),
          ...s.unknown.map((m) => `applied but not in the directory: ${m}`),
          ...(s.drift ? [`drift: the database differs from the migrations:\n${s.drift}`] : []),
        ];
        if (problems.length === 0) {
          console.log("database and migrations agree");
          return 0;
        }
        console.error(problems.join("\n"));
        return 1;
      }
      default:
        return usage();
    }
  } finally {
    await migrator.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof MigrationError ? err.message : err);
    process.exit(1);
  },
);
