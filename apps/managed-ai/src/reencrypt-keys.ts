// Key rotation, last step: re-seal every stored credential (upstream keys, byok keys, connected accounts) with the
// current key of ENCRYPTION_KEYS (docs/decisions/0015). Run with the service's
// environment: `pnpm --filter @gateway/managed-ai reencrypt-keys`, or in an image
// `node apps/managed-ai/dist/reencrypt-keys.js`. Exits 1 when a credential could not
// be opened (its key is missing from ENCRYPTION_KEYS).
import { runCommand } from "@gateway/runtime";
import { parseKeyring } from "./crypto/keyring.js";
import { createPrisma } from "./db.js";
import { reencryptUpstreamKeys } from "./domain/upstreams/reencrypt.js";
import { reencryptCustomerSecrets } from "./domain/connected-accounts/reencrypt.js";
import { upstreamRows } from "./storage/catalog.js";
import { connectedAccountRows } from "./storage/connected-accounts.js";
import { instanceRows } from "./storage/instances.js";
import { loadEnv } from "./env.js";

await runCommand({
  service: "managed-ai",
  component: "reencrypt-keys",
  usage: `Usage: pnpm --filter @gateway/managed-ai reencrypt-keys

Re-seals every stored provider credential with the current (first) key of
ENCRYPTION_KEYS (docs/decisions/0015). Uses the service's environment
(DATABASE_URL, DATABASE_NAME, ENCRYPTION_KEYS). Exits 1 when a credential could not
be opened because its key is missing from ENCRYPTION_KEYS.`,
  loadEnv,
  createPrisma,
  async run({ env, prisma, logger }) {
    const keyring = parseKeyring(env.ENCRYPTION_KEYS);
    const store = { upstreams: upstreamRows(prisma), instances: instanceRows(prisma), accounts: connectedAccountRows(prisma) };
    const upstreams = await reencryptUpstreamKeys({ ctx: { store, keyring, logger } });
    // Byok instance keys and connected account secrets (docs/decisions/0140, 0141).
    const customers = await reencryptCustomerSecrets({ ctx: { store, keyring, logger } });
    logger.info({ current_key_id: keyring.currentId, upstreams, customer_secrets: customers }, "re-encryption finished");
    return upstreams.failed.length + customers.failed.length === 0;
  },
});
