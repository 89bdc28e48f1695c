// Key rotation, last step: re-seal every secret messaging stores (push target secrets
// and bot tokens, SocialOps reply secrets, conversation webhook secrets) with the
// current key of ENCRYPTION_KEYS (docs/decisions/0111). Run with the service's
// environment: `pnpm --filter @gateway/messaging reencrypt-keys`, or in an image
// `node apps/messaging/dist/reencrypt-keys.js`. Exits 1 when a secret could not be
// opened (its key is missing from ENCRYPTION_KEYS).
import { runCommand } from "@gateway/runtime";
import { parseKeyring } from "@gateway/secrets";
import { createPrisma } from "./db.js";
import { reencryptMessagingSecrets } from "./domain/secrets/reencrypt.js";
import { loadEnv } from "./env.js";

await runCommand({
  service: "messaging",
  component: "reencrypt-keys",
  usage: `Usage: pnpm --filter @gateway/messaging reencrypt-keys

Re-seals every secret messaging stores (push target secrets and bot tokens, SocialOps
reply secrets, conversation webhook secrets) with the current (first) key of
ENCRYPTION_KEYS, so older keys can be removed. Uses the service's environment
(DATABASE_URL, DATABASE_NAME, ENCRYPTION_KEYS). Exits 1 when a secret could not be
opened because its key is missing from ENCRYPTION_KEYS.`,
  loadEnv,
  createPrisma,
  async run({ env, prisma, logger }) {
    const keyring = parseKeyring(env.ENCRYPTION_KEYS);
    const result = await reencryptMessagingSecrets({ prisma, keyring, logger });
    logger.info({ current_key_id: keyring.currentId, ...result }, "re-encryption finished");
    return result.failed.length === 0;
  },
});
