import type { Logger } from "@gateway/logger";
import { addReseal, resealRows, type Keyring, type ResealResult } from "@gateway/secrets";
import type { PrismaClient } from "../../generated/prisma/client.js";
import { replySecretContext, targetBotTokenContext, targetSecretContext, type StoredPushConfig, type StoredSocialOpsConfig } from "../instances/config.js";
import { webhookSecretContext } from "../webhooks/register.js";

type Ctx = { prisma: PrismaClient; keyring: Keyring; logger: Logger };

/** A sealed value inside an instance's config, where it sits and the context it is bound to. */
type Field = { id: string; ciphertext: Uint8Array; keyId: string; context: string; put(sealed: { key_id: string; sealed: string }): void };

function fieldsOf(instance: { id: string; serviceId: string; config: unknown }): Field[] {
  const fields: Field[] = [];
  const add = (name: string, value: { key_id: string; sealed: string } | null, context: string, put: Field["put"]) => {
    if (value) fields.push({ id: `${instance.id}/${name}`, ciphertext: Buffer.from(value.sealed, "base64"), keyId: value.key_id, context, put });
  };
  if (instance.serviceId === "webhook-push") {
    for (const t of (instance.config as StoredPushConfig).targets) {
      if (t.type === "webhook") add(`${t.id}.secret`, t.secret, targetSecretContext(instance.id, t.id), (s) => (t.secret = s));
      else add(`${t.id}.bot_token`, t.bot_token, targetBotTokenContext(instance.id, t.id), (s) => (t.bot_token = s));
    }
  } else if (instance.serviceId === "socialops") {
    const cfg = instance.config as StoredSocialOpsConfig;
    add("reply_webhook_secret", cfg.reply_webhook_secret, replySecretContext(instance.id), (s) => (cfg.reply_webhook_secret = s));
  }
  return fields;
}

/**
 * Key rotation, last step, for messaging (docs/decisions/0111): every secret sealed in
 * a push or SocialOps instance's config (webhook target secrets, bot tokens, reply
 * webhook secrets) and every conversation webhook secret is sealed again under the
 * current key of ENCRYPTION_KEYS, so older keys can then be removed. An instance's
 * config is replaced only if its version is still the one read (an update through the
 * API wins: it sealed under the current key); the version does not change.
 */
export async function reencryptMessagingSecrets(ctx: Ctx): Promise<ResealResult> {
  let result: ResealResult = { reencrypted: 0, current: 0, failed: [] };
  const instances = await ctx.prisma.appInstance.findMany({ select: { id: true, serviceId: true, config: true, version: true }, orderBy: { id: "asc" } });
  for (const instance of instances) {
    const fields = fieldsOf(instance);
    let changed = false;
    const done = await resealRows(
      ctx.keyring,
      ctx.logger,
      "instance_field",
      fields,
      (f) => f.context,
      async (f, sealed) => {
        f.put({ key_id: sealed.keyId, sealed: Buffer.from(sealed.ciphertext).toString("base64") });
        changed = true;
        return true;
      },
    );
    if (changed) {
      const replaced = await ctx.prisma.appInstance.updateMany({
        where: { id: instance.id, version: instance.version },
        data: { config: instance.config as object },
      });
      if (replaced.count === 0) {
        ctx.logger.info({ instance_id: instance.id }, "instance changed meanwhile; its secrets were sealed by that change");
        done.reencrypted = 0;
      }
    }
    result = addReseal(result, done);
  }
  const webhooks = await ctx.prisma.conversationWebhook.findMany({ select: { id: true, secretCiphertext: true, secretKeyId: true }, orderBy: { id: "asc" } });
  const hooks = await resealRows(
    ctx.keyring,
    ctx.logger,
    "conversation_webhook",
    webhooks.map((w) => ({ id: w.id, ciphertext: w.secretCiphertext, keyId: w.secretKeyId })),
    (w) => webhookSecretContext(w.id),
    async (w, sealed) =>
      (
        await ctx.prisma.conversationWebhook.updateMany({
          where: { id: w.id, secretKeyId: w.keyId, secretCiphertext: w.ciphertext as Uint8Array<ArrayBuffer> },
          data: { secretCiphertext: sealed.ciphertext, secretKeyId: sealed.keyId },
        })
      ).count === 1,
  );
  return addReseal(result, hooks);
}
