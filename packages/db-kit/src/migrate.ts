import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import type { MigrationList, SchemaFilter } from "@prisma/schema-engine-wasm";
import { connectionConfig } from "./database.js";
import { openEngine, type EngineHandle } from "./engine.js";

const LOCKFILE = "migration_lock.toml";
const LOCKFILE_CONTENT = '# Written by gateway-migrate. Do not edit.\nprovider = "postgresql"\n';
const NO_FILTER: SchemaFilter = { externalTables: [], externalEnums: [] };
/** Our own advisory lock key; Prisma's engine may take its own (72707369) inside. */
const DEPLOY_LOCK_SQL = "SELECT pg_advisory_lock(hashtext('gateway-migrate'))";
const DEPLOY_UNLOCK_SQL = "SELECT pg_advisory_unlock(hashtext('gateway-migrate'))";

export type MigratorOptions = {
  /** Connection URL of the service's own database (it must exist). */
  url: string;
  /** The service's `prisma/schema.prisma`. */
  schemaPath: string;
  /** The service's `prisma/migrations` directory. */
  migrationsDir: string;
  log?: (line: string) => void;
};

export type MigrationStatus = {
  /** Migrations in the directory that the database has not applied. */
  pending: string[];
  /** Applied migrations whose file has changed since. */
  edited: string[];
  failed: string[];
  /** Migrations the database has applied that the directory does not have. */
  unknown: string[];
  /** SQL that would turn the migrated schema into the live one; empty when in sync. */
  drift: string;
};

export class MigrationError extends Error {
  override readonly name = "MigrationError";
}

/** The engine's errors carry a Rust backtrace after the message; keep the message. */
function engineMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split(/\n\s+0: /)[0]!.trim();
}

async function wrap<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof MigrationError) throw err;
    throw new MigrationError(`${what}: ${engineMessage(err)}`);
  }
}

function isEmptyScript(sql: string | null | undefined): boolean {
  if (!sql) return true;
  return sql
    .split("\n")
    .map((l) => l.trim())
    .every((l) => l === "" || l.startsWith("--"));
}

export function migrationName(name: string, now = new Date()): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (!slug) throw new MigrationError("a migration needs a name of letters or digits");
  const stamp = now.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return `${stamp}_${slug}`;
}

export async function readMigrations(migrationsDir: string): Promise<MigrationList> {
  const lockPath = join(migrationsDir, LOCKFILE);
  const directories = existsSync(migrationsDir)
    ? (await readdir(migrationsDir, { withFileTypes: true }))
        .filter((d) => d.isDirectory())
        .map((d) => d.name)
        .sort()
    : [];
  return {
    baseDir: migrationsDir,
    // Every service is on PostgreSQL: a directory without a lockfile yet is a PostgreSQL one.
    lockfile: { path: LOCKFILE, content: existsSync(lockPath) ? await readFile(lockPath, "utf8") : LOCKFILE_CONTENT },
    shadowDbInitScript: "",
    migrationDirectories: await Promise.all(
      directories.map(async (path) => {
        const file = join(migrationsDir, path, "migration.sql");
        const content = existsSync(file)
          ? ({ tag: "ok", value: await readFile(file, "utf8") } as const)
          : ({ tag: "error", value: `missing ${file}` } as const);
        return { path, migrationFile: { path: "migration.sql", content } };
      }),
    ),
  };
}

/**
 * `prisma migrate` for one service, on the wasm schema engine:
 * create (diff the migrations against the schema), deploy (apply pending ones),
 * check (schema and migrations agree) and status (database and migrations agree).
 */
export class Migrator {
  private constructor(
    private readonly options: MigratorOptions,
    private readonly schema: string,
    private readonly handle: EngineHandle,
  ) {}

  static async open(options: MigratorOptions): Promise<Migrator> {
    const schema = await readFile(options.schemaPath, "utf8");
    const handle = await wrap("opening the schema engine", () => openEngine(options.url, [["schema.prisma", schema]], options.log));
    return new Migrator(options, schema, handle);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }

  private schemaFiles() {
    return [{ path: "schema.prisma", content: this.schema }];
  }

  /** SQL from the state the migrations produce to the schema; "" when they agree. */
  async pendingSchemaChanges(): Promise<string> {
    const list = await readMigrations(this.options.migrationsDir);
    const result = await wrap("diffing migrations against the schema", () =>
      this.handle.engine.diff({
        from: { tag: "migrations", ...list },
        to: { tag: "schemaDatamodel", files: this.schemaFiles() },
        script: true,
        exitCode: true,
        filters: NO_FILTER,
      }),
    );
    return isEmptyScript(result.stdout) ? "" : (result.stdout ?? "");
  }

  /** Writes a new migration for the schema's changes; null when there are none. */
  async create(name: string, now = new Date()): Promise<{ name: string; sql: string } | null> {
    const sql = await this.pendingSchemaChanges();
    if (!sql) return null;
    const dirName = migrationName(name, now);
    await mkdir(join(this.options.migrationsDir, dirName), { recursive: true });
    await writeFile(join(this.options.migrationsDir, dirName, "migration.sql"), sql);
    const lockPath = join(this.options.migrationsDir, LOCKFILE);
    if (!existsSync(lockPath)) await writeFile(lockPath, LOCKFILE_CONTENT);
    return { name: dirName, sql };
  }

  /** Applies pending migrations, one deployer at a time per database. Returns their names. */
  async deploy(): Promise<string[]> {
    const list = await readMigrations(this.options.migrationsDir);
    const lock = new pg.Client(connectionConfig(this.options.url));
    await lock.connect();
    try {
      await lock.query(DEPLOY_LOCK_SQL);
      const out = await wrap("applying migrations", () => this.handle.engine.applyMigrations({ migrationsList: list, filters: NO_FILTER }));
      return out.appliedMigrationNames;
    } finally {
      await lock.query(DEPLOY_UNLOCK_SQL).catch(() => undefined);
      await lock.end();
    }
  }

  /** How the database stands against the migrations directory. */
  async status(): Promise<MigrationStatus> {
    const list = await readMigrations(this.options.migrationsDir);
    const diag = await wrap("reading the migration history", () =>
      this.handle.engine.diagnoseMigrationHistory({ migrationsList: list, optInToShadowDatabase: false, filters: NO_FILTER }),
    );
    const history = diag.history;
    const pending = history?.diagnostic === "databaseIsBehind" || history?.diagnostic === "historiesDiverge" ? history.unappliedMigrationNames : [];
    const unknown =
      history?.diagnostic === "migrationsDirectoryIsBehind" || history?.diagnostic === "historiesDiverge" ? history.unpersistedMigrationNames : [];
    const drift = await wrap("diffing migrations against the database", () =>
      this.handle.engine.diff({
        from: { tag: "migrations", ...list },
        to: { tag: "schemaDatasource", files: this.schemaFiles(), configDir: this.options.migrationsDir },
        script: true,
        exitCode: true,
        filters: NO_FILTER,
      }),
    );
    return {
      pending,
      edited: diag.editedMigrationNames,
      failed: diag.failedMigrationNames,
      unknown,
      drift: pending.length > 0 || isEmptyScript(drift.stdout) ? "" : (drift.stdout ?? ""),
    };
  }
}
