import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTransact } from "@gateway/events-runtime";
import { createLogger } from "@gateway/logger";
import { createPrisma } from "../db.js";
import type { FilesContext, FilesLimits, Tx } from "../domain/context.js";
import { LocalStore } from "../storage/local.js";
import { catalogChecked, freshDatabase } from "@gateway/testkit";

export const SERVER_URL = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));

export type TestFiles = {
  ctx: FilesContext;
  dir: string;
  /** Names in the store's directory (complete objects and partial uploads). */
  storedNames(): Promise<string[]>;
  sql<T = Record<string, unknown>>(text: string, ...values: unknown[]): Promise<T[]>;
  /** Outbox rows (no relay runs here), each checked against the event catalog. */
  events(type?: string): Promise<{ type: string; payload: Record<string, unknown> }[]>;
  close(): Promise<void>;
};

/** The files domain on a fresh database (gw_test_files_<random>) and a temporary local store. */
export async function openTestFiles(limits: Partial<FilesLimits> = {}): Promise<TestFiles> {
  const db = await freshDatabase({ prefix: "gw_test_files", prismaDir: PRISMA_DIR, serverUrl: SERVER_URL });
  const pool = db.pool;
  const prisma = createPrisma(pool);
  const dir = await mkdtemp(join(tmpdir(), "files-test-"));
  const transact = createTransact<Tx>((fn) => prisma.$transaction(fn, { timeout: 15_000, maxWait: 10_000 }));
  const sql = <T>(text: string, ...values: unknown[]) => prisma.$queryRawUnsafe<T[]>(text, ...values);
  return {
    ctx: {
      prisma,
      transact,
      store: new LocalStore(dir),
      limits: {
        maxBytes: 10 * 1_048_576,
        defaultTtlSeconds: 3_600,
        maxTtlSeconds: 86_400,
        tenantBytesQuota: 1_073_741_824,
        tenantFilesQuota: 10_000,
        ...limits,
      },
      logger: createLogger({ service: "files-test", level: "silent" }),
    },
    dir,
    async storedNames() {
      const top = (await readdir(dir).catch(() => [])).filter((n) => n !== ".partial");
      const partial = await readdir(join(dir, ".partial")).catch(() => []);
      return [...top, ...partial.map((n) => `.partial/${n}`)];
    },
    sql,
    async events(type) {
      return catalogChecked(
        await sql<{ type: string; payload: Record<string, unknown> }>(
          "SELECT type, payload FROM outbox_events WHERE $1::text IS NULL OR type = $1 ORDER BY seq",
          type ?? null,
        ),
      );
    },
    async close() {
      await prisma.$disconnect();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** `total` bytes of a seeded pattern in 64 KiB pieces; throws after `failAfter` bytes when given. */
export async function* pattern(total: number, options: { seed?: number; failAfter?: number; piece?: number } = {}): AsyncGenerator<Uint8Array> {
  const seed = options.seed ?? 1;
  const piece = options.piece ?? 65_536;
  for (let sent = 0; sent < total; ) {
    if (options.failAfter !== undefined && sent >= options.failAfter) throw new Error("the client went away");
    const n = Math.min(piece, total - sent);
    const chunk = Buffer.alloc(n);
    for (let i = 0; i < n; i++) chunk[i] = ((sent + i) * seed) & 0xff;
    sent += n;
    yield chunk;
  }
}
