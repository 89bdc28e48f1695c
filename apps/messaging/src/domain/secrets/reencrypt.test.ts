import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseKeyring, sealCredential, type Keyring } from "@gateway/secrets";
import { createTestContext, type TestContext } from "../../testing/context.js";
import {
  openSecret,
  replySecretContext,
  storePushConfig,
  targetBotTokenContext,
  targetSecretContext,
  type StoredPushConfig,
  type StoredSocialOpsConfig,
} from "../instances/config.js";
import { openWebhookSecret, webhookSecretContext } from "../webhooks/register.js";
import { reencryptMessagingSecrets } from "./reencrypt.js";

const oldKey = `old:${randomBytes(32).toString("base64")}`;
const newKey = `new:${randomBytes(32).toString("base64")}`;
const before = parseKeyring(oldKey);
/** After the rotation: the new key is current, the old one still opens. */
const rotated = parseKeyring(`${newKey},${oldKey}`);
const onlyNew = parseKeyring(newKey);

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t?.close());

async function pushInstance(id: string, keyring: Keyring): Promise<void> {
  const config = await storePushConfig(
    {
      targets: [
        { id: "hook", type: "webhook", url: "https://hooks.example.com/push", secret: "webhook-secret-0123456789", enabled: true },
        { id: "tg", type: "telegram", bot_token: "123456:bot-token-ABC", chat_id: 42, enabled: true },
      ],
    },
    null,
    id,
    keyring,
    { allowPrivate: true },
  );
  await t.ctx.prisma.appInstance.create({ data: { id, tenantId: "ten_1", serviceId: "webhook-push", alias: id, status: "active", config, version: 1 } });
}

describe("re-sealing messaging's secrets after a key rotation", () => {
  it("re-seals push, SocialOps and conversation webhook secrets under the current key, and they still open to the same values", async () => {
    await pushInstance("inst_push", before);
    const reply = sealCredential(before, "reply-secret-0123456789", replySecretContext("inst_social"));
    const social: StoredSocialOpsConfig = {
      reply_webhook_url: "https://hooks.example.com/reply",
      reply_webhook_secret: { key_id: reply.keyId, sealed: Buffer.from(reply.ciphertext).toString("base64") },
    };
    await t.ctx.prisma.appInstance.create({
      data: { id: "inst_social", tenantId: "ten_1", serviceId: "socialops", alias: "inbox", status: "active", config: social, version: 3 },
    });
    const hook = sealCredential(before, "conversation-secret-0123456789", webhookSecretContext("cwh_1"));
    await t.ctx.prisma.conversationWebhook.create({
      data: {
        id: "cwh_1",
        tenantId: "ten_1",
        url: "https://hooks.example.com/c",
        secretCiphertext: hook.ciphertext,
        secretKeyId: hook.keyId,
        eventTypes: [],
        status: "active",
      },
    });

    const first = await reencryptMessagingSecrets({ ...t.ctx, keyring: rotated });
    expect(first).toEqual({ reencrypted: 4, current: 0, failed: [] });
    // Run again: nothing left to do.
    expect(await reencryptMessagingSecrets({ ...t.ctx, keyring: rotated })).toEqual({ reencrypted: 0, current: 4, failed: [] });

    // Everything opens with the new key alone, to the same plaintext; versions are unchanged.
    const push = await t.ctx.prisma.appInstance.findUniqueOrThrow({ where: { id: "inst_push" } });
    expect(push.version).toBe(1);
    const [webhookTarget, telegramTarget] = (push.config as StoredPushConfig).targets;
    expect(webhookTarget!.type === "webhook" && openSecret(onlyNew, webhookTarget!.secret!, targetSecretContext("inst_push", "hook"))).toBe(
      "webhook-secret-0123456789",
    );
    expect(telegramTarget!.type === "telegram" && openSecret(onlyNew, telegramTarget!.bot_token!, targetBotTokenContext("inst_push", "tg"))).toBe(
      "123456:bot-token-ABC",
    );
    const socialRow = await t.ctx.prisma.appInstance.findUniqueOrThrow({ where: { id: "inst_social" } });
    expect(socialRow.version).toBe(3);
    expect(openSecret(onlyNew, (socialRow.config as StoredSocialOpsConfig).reply_webhook_secret!, replySecretContext("inst_social"))).toBe(
      "reply-secret-0123456789",
    );
    const webhook = await t.ctx.prisma.conversationWebhook.findUniqueOrThrow({ where: { id: "cwh_1" } });
    expect(webhook.secretKeyId).toBe("new");
    expect(openWebhookSecret({ keyring: onlyNew }, webhook)).toBe("conversation-secret-0123456789");
  });

  it("reports a secret whose key is gone and leaves its row as it was", async () => {
    const lost = parseKeyring(`lost:${randomBytes(32).toString("base64")}`);
    await pushInstance("inst_lost", lost);
    const stored = (await t.ctx.prisma.appInstance.findUniqueOrThrow({ where: { id: "inst_lost" } })).config;
    const result = await reencryptMessagingSecrets({ ...t.ctx, keyring: rotated });
    expect(result.failed.sort()).toEqual(["inst_lost/hook.secret", "inst_lost/tg.bot_token"]);
    expect((await t.ctx.prisma.appInstance.findUniqueOrThrow({ where: { id: "inst_lost" } })).config).toEqual(stored);
  });
});
