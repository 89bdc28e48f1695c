import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { migrationName } from "@gateway/db-kit";
import { type Catalog, catalogDifferences, type Queryable, readCatalog } from "./catalog.js";
import { catalogFromSources, rolledBack, runSource, type SqlSource } from "./sources.js";

export type SqlMigration = {
  /** The files whose statements the migration runs. */
  files: string[];
  /** Functions, views and triggers no file defines any more: dropped. */
  removed: string[];
  sql: string;
};

const HEADER = (
  files: string[],
) => `-- Generated from apps/ledger/sql/ by \`pnpm --filter @gateway/ledger run sql:migration\`: ${files.join(", ") || "drops only"}.
-- The files are the source (apps/ledger/sql/README.md); this is their state at this migration.
`;

/**
 * The migration that takes `db` (migrated to the newest migration) to what the files of
 * sql/ install: the whole text of each file that changes something, and a DROP for what no
 * file defines any more. null when they agree. Checked before it is returned: the
 * migration, run on `db` in a transaction rolled back, leaves exactly the files' catalog.
 */
export async function planSqlMigration(db: Queryable, sources: SqlSource[]): Promise<SqlMigration | null> {
  const current = await readCatalog(db);
  const target = await catalogFromSources(db, sources);
  const differ = catalogDifferences(current, target);
  if (differ.length === 0) return null;

  const removed = differ.filter((key) => !(key in target));
  const drops = (kinds: string[]) => removed.filter((key) => kinds.includes(current[key]!.kind)).map((key) => current[key]!.drop);
  const files: string[] = [];
  const parts: string[] = [];
  for (const source of sources) {
    const text = await changedText(db, current, source);
    if (text === null) continue;
    files.push(source.file);
    parts.push(text);
  }
  const sql = [HEADER(files), ...drops(["trigger", "view"]), ...parts, ...drops(["function"])].join("\n").replace(/\n*$/, "\n");

  const result = await rolledBack(db, async () => {
    await db.query(sql);
    return readCatalog(db);
  });
  const left = catalogDifferences(result, target);
  if (left.length > 0) throw new Error(`the generated migration does not install sql/ exactly (${left.join("; ")}): write this one by hand`);
  return { files, removed, sql };
}

/**
 * The file's text when running it changes the catalog, else null. A file that cannot
 * replace what is there (a view whose columns change, a function whose result type
 * changes) runs after a DROP of the object it is named after.
 */
async function changedText(db: Queryable, current: Catalog, source: SqlSource): Promise<string | null> {
  const changes = (text: string) =>
    rolledBack(db, async () => {
      await runSource(db, { file: source.file, text });
      return catalogDifferences(current, await readCatalog(db)).length > 0;
    });
  try {
    return (await changes(source.text)) ? source.text : null;
  } catch (err) {
    const object = source.file.replace(/\.sql$/, "");
    const drops = Object.entries(current)
      .filter(([key]) => key.startsWith(`function ${object}(`) || key === `view ${object}`)
      .map(([, o]) => o.drop);
    if (drops.length === 0) throw err;
    const text = `${drops.join("\n")}\n${source.text}`;
    try {
      await changes(text);
    } catch {
      throw err;
    }
    return text;
  }
}

/** `<stamp>_<name>`, its stamp now or, when that is not after the newest migration's, one second after it. */
export async function nextMigrationName(migrationsDir: string, name: string, now = new Date()): Promise<string> {
  const dirs = existsSync(migrationsDir) ? (await readdir(migrationsDir)).filter((d) => /^\d{14}_/.test(d)).sort() : [];
  const last = dirs.at(-1)?.slice(0, 14);
  const candidate = migrationName(name, now);
  if (!last || candidate.slice(0, 14) > last) return candidate;
  const s = last.replace(/^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/, "$1-$2-$3T$4:$5:$6Z");
  return migrationName(name, new Date(Date.parse(s) + 1_000));
}

/** Writes the migration as prisma/migrations/<name>/migration.sql. */
export async function writeSqlMigration(migrationsDir: string, dirName: string, migration: SqlMigration): Promise<string> {
  const path = join(migrationsDir, dirName, "migration.sql");
  await mkdir(join(migrationsDir, dirName), { recursive: true });
  await writeFile(path, migration.sql);
  return path;
}
