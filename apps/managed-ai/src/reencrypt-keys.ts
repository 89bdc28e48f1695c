// Key rotation, last step: re-seal every stored provider credential with the
// current key of ENCRYPTION_KEYS (docs/decisions/0015). Run with the service's
// environment: `pnpm --filter @gateway/managed-ai reencrypt-keys`, or in an image
// `node apps/managed-ai/dist/reencrypt-keys.js`. Exits 1 when a credential could not
// be opened (its key is missing from ENCRYPTION_KEYS).
import { createPool, databaseUrl } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { parseKeyring } from "./crypto/keyring.js";
import { createPrisma } from "./db.js";
import { reencryptUpstreamKeys } from "./domain/upstreams/reencrypt.js";
import { loadEnv } from "./env.js";

const env = loadEnv(process.env);
const logger = createLogger({ service: "managed-ai", level: env.LOG_LEVEL }).child({ component: "reencrypt-keys" });
const prisma = createPrisma(createPool(databaseUrl(env.DATABASE_URL, env.DATABASE_NAME), { poolSize: 2 }));
try {
  const keyring = parseKeyring(env.ENCRYPTION_KEYS);
  const result = await reencryptUpstreamKeys({ ctx: { prisma, keyring, logger } });
  logger.info({ current_key_id: keyring.currentId, ...result }, "re-encryption finished");
  process.exitCode = result.failed.length > 0 ? 1 : 0;
} finally {
  await prisma.$disconnect();
}
