import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { createTransact } from "@gateway/events-runtime";
import { createLogger } from "@gateway/logger";
import { checkUrl, egressPolicy } from "@gateway/outbound";
import { parseKeyring } from "@gateway/secrets";
import { createPrisma, type Tx } from "../db.js";
import { formatOnlyFileRefs } from "../domain/files/file-refs.js";
import type { HubContext } from "../domain/hub-context.js";
import { freshDatabase } from "@gateway/testkit";
import { withFeed } from "../domain/feed/project.js";

const PRISMA_DIR = fileURLToPath(new URL("../../prisma", import.meta.url));

export type TestHub = {
  ctx: HubContext;
  /** Session ids announced as revoked (what the edges would hear). */
  announced: string[];
  kicks: () => number;
  outbox(): Promise<{ id: string; type: string; payload: Record<string, unknown> }[]>;
  close(): Promise<void>;
};

/** A hub context on its own freshly migrated database (dropped by `close`): real PostgreSQL, transactions and outbox. */
export async function createTestHub(overrides: Partial<HubContext> = {}): Promise<TestHub> {
  const db = await freshDatabase({ prefix: "gw_test_msg", prismaDir: PRISMA_DIR, poolSize: 12 });
  const pool = db.pool;
  const prisma = createPrisma(pool);
  const announced: string[] = [];
  let kicks = 0;
  const ctx: HubContext = {
    prisma,
    transact: withFeed(createTransact<Tx>((fn) => prisma.$transaction(fn, { timeout: 15_000, maxWait: 10_000 }))),
    logger: createLogger({ service: "messaging", level: "silent" }),
    keyring: parseKeyring(`k1:${randomBytes(32).toString("base64")}`),
    widgetRefreshTtlSeconds: 3_600,
    async checkWebhookUrl(u) {
      const check = await checkUrl(u, egressPolicy({ allowPrivateTargets: true }));
      return check.ok ? { ok: true } : { ok: false, reason: check.reason };
    },
    kickWebhooks: () => {
      kicks += 1;
    },
    announceRevoked: async (ids) => {
      announced.push(...ids);
    },
    files: formatOnlyFileRefs,
    ...overrides,
  };
  return {
    ctx,
    announced,
    kicks: () => kicks,
    outbox: async () =>
      (await prisma.outboxEvent.findMany({ orderBy: { seq: "asc" } })).map((e) => ({ id: e.id, type: e.type, payload: e.payload as Record<string, unknown> })),
    async close() {
      await prisma.$disconnect();
      await db.drop();
    },
  };
}
