// Key rotation, last step: re-seal every stored credential (upstream keys, byok keys, connected accounts) with the
// current key of ENCRYPTION_KEYS (docs/decisions/0015). Run with the service's
// environment: `pnpm --filter @gateway/managed-ai reencrypt-keys`, or in an image
// `node apps/managed-ai/dist/reencrypt-keys.js`. Exits 1 when a credential could not
// be opened (its key is missing from ENCRYPTION_KEYS).
import { createPool, databaseUrl } from "@gateway/db-kit";
import { createLogger } from "@gateway/logger";
import { parseKeyring } from "./crypto/keyring.js";
import { createPrisma } from "./db.js";
import { reencryptUpstreamKeys } from "./domain/upstreams/reencrypt.js";
import { reencryptCustomerSecrets } from "./domain/connected-accounts/reencrypt.js";
import { loadEnv } from "./env.js";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm --filter @gateway/managed-ai reencrypt-keys

Re-seals every stored provider credential with the current (first) key of
ENCRYPTION_KEYS (docs/decisions/0015). Uses the service's environment
(DATABASE_URL, DATABASE_NAME, ENCRYPTION_KEYS). Exits 1 when a credential could not
be opened because its key is missing from ENCRYPTION_KEYS.`);
  process.exit(0);
}
const env = loadEnv(process.env);
const logger = createLogger({ service: "managed-ai", level: env.LOG_LEVEL }).child({ component: "reencrypt-keys" });
const prisma = createPrisma(createPool(databaseUrl(env.DATABASE_URL, env.DATABASE_NAME), { poolSize: 2 }));
try {
  const keyring = parseKeyring(env.ENCRYPTION_KEYS);
  const upstreams = await reencryptUpstreamKeys({ ctx: { prisma, keyring, logger } });
  // Byok instance keys and connected account secrets (docs/decisions/0140, 0141).
  const customers = await reencryptCustomerSecrets({ ctx: { prisma, keyring, logger } });
  logger.info({ current_key_id: keyring.currentId, upstreams, customer_secrets: customers }, "re-encryption finished");
  process.exitCode = upstreams.failed.length + customers.failed.length > 0 ? 1 : 0;
} finally {
  await prisma.$disconnect();
}
