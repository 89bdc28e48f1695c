import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Catalog, dropAll, type Queryable, readCatalog } from "./catalog.js";

/** apps/ledger/sql: one file per function, view or trigger function of the ledger (read from src/ and dist/ alike). */
export const SQL_DIR = fileURLToPath(new URL("../../sql", import.meta.url));

/** One file of sql/: CREATE OR REPLACE statements, run as they are. */
export type SqlSource = { file: string; text: string };

/** The files of sql/, in name order (the order they are installed in). */
export async function readSources(dir = SQL_DIR): Promise<SqlSource[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(join(dir, file), "utf8") })));
}

/** Runs one file; an error names the file. */
export async function runSource(db: Queryable, source: SqlSource): Promise<void> {
  try {
    await db.query(source.text);
  } catch (err) {
    throw new Error(`sql/${source.file}: ${(err as Error).message}`, { cause: err });
  }
}

/** Runs `fn` in a transaction that is always rolled back: the database is left as it was. */
export async function rolledBack<T>(db: Queryable, fn: () => Promise<T>): Promise<T> {
  await db.query("BEGIN");
  try {
    return await fn();
  } finally {
    await db.query("ROLLBACK");
  }
}

/**
 * The catalog the files would install on this database's tables: every function, view
 * and trigger dropped, then the files run in order; all in a transaction rolled back.
 */
export async function catalogFromSources(db: Queryable, sources: SqlSource[]): Promise<Catalog> {
  return rolledBack(db, async () => {
    await dropAll(db, await readCatalog(db));
    for (const source of sources) await runSource(db, source);
    return readCatalog(db);
  });
}
