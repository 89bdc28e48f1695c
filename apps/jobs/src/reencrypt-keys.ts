// Key rotation, last step: re-seal every job callback and account webhook secret with the current key of
// ENCRYPTION_KEYS (docs/decisions/0104). Run with the service's environment:
// `pnpm --filter @gateway/jobs reencrypt-keys`, or in an image
// `node apps/jobs/dist/reencrypt-keys.js`. Exits 1 when a secret could not be opened
// (its key is missing from ENCRYPTION_KEYS).
import { runCommand } from "@gateway/runtime";
import { parseKeyring } from "@gateway/secrets";
import { reencryptCallbackSecrets } from "./domain/callbacks/reencrypt.js";
import { reencryptWebhookSecrets } from "./domain/account-webhooks/reencrypt.js";
import { createPrisma } from "./db.js";
import { loadEnv } from "./env.js";

await runCommand({
  service: "jobs",
  component: "reencrypt-keys",
  usage: `Usage: pnpm --filter @gateway/jobs reencrypt-keys

Re-seals every job callback and account webhook secret with the current (first) key of ENCRYPTION_KEYS,
so older keys can be removed. Uses the service's environment (DATABASE_URL,
DATABASE_NAME, ENCRYPTION_KEYS). Exits 1 when a secret could not be opened because
its key is missing from ENCRYPTION_KEYS.`,
  loadEnv,
  createPrisma,
  async run({ env, prisma, logger }) {
    const keyring = parseKeyring(env.ENCRYPTION_KEYS);
    const callbacks = await reencryptCallbackSecrets({ prisma, keyring, logger });
    const webhooks = await reencryptWebhookSecrets({ prisma, keyring, logger });
    logger.info({ current_key_id: keyring.currentId, callbacks, webhooks }, "re-encryption finished");
    return callbacks.failed.length === 0 && webhooks.failed.length === 0;
  },
});
