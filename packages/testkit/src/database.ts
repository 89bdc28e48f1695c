import { randomBytes } from "node:crypto";
import { createPool, dropDatabase, prepareDatabase } from "@gateway/db-kit";

/** A database of a test's own (see `freshDatabase`). */
export type FreshDatabase = { name: string; url: string; serverUrl: string; pool: ReturnType<typeof createPool>; drop(): Promise<void> };

/**
 * A freshly created and migrated database for one test file, `<prefix>_<random>` on the
 * machine's PostgreSQL (DATABASE_URL, or the local default), and a pool on it; `drop`
 * ends the pool and drops the database. Each run has its own, so runs never collide.
 */
export async function freshDatabase(options: { prefix: string; prismaDir: string; poolSize?: number; serverUrl?: string }): Promise<FreshDatabase> {
  const serverUrl = options.serverUrl ?? process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const name = `${options.prefix}_${randomBytes(4).toString("hex")}`;
  const url = await prepareDatabase({
    serverUrl,
    name,
    schemaPath: `${options.prismaDir}/schema.prisma`,
    migrationsDir: `${options.prismaDir}/migrations`,
    migrate: true,
  });
  const pool = createPool(url, { poolSize: options.poolSize ?? 10 });
  return {
    name,
    url,
    serverUrl,
    pool,
    async drop() {
      await pool.end().catch(() => undefined);
      await dropDatabase(serverUrl, name);
    },
  };
}
