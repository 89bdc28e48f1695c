import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseKeyring } from "@gateway/secrets";
import { openSecret, PushConfigInput, redactedConfig, storePushConfig, storeSocialOpsConfig, targetBotTokenContext, targetSecretContext } from "./config.js";

const keyring = parseKeyring(`k1:${randomBytes(32).toString("base64")}`);
const open = { allowPrivate: true };
const closed = { allowPrivate: false };
const parse = (targets: unknown[]) => PushConfigInput.parse({ targets });

describe("push configs at rest", () => {
  it("seal secrets and bot tokens bound to their instance and target, and show them redacted", async () => {
    const stored = await storePushConfig(
      parse([
        { id: "a", type: "webhook", url: "http://127.0.0.1:1/a", secret: "whsec-1" },
        { id: "t", type: "telegram", bot_token: "1:tok", chat_id: 5 },
      ]),
      null,
      "inst_1",
      keyring,
      open,
    );
    const text = JSON.stringify(stored);
    expect(text).not.toContain("whsec-1");
    expect(text).not.toContain("1:tok");
    const [a, t] = stored.targets;
    if (a?.type !== "webhook" || t?.type !== "telegram") throw new Error("shape");
    expect(openSecret(keyring, a.secret!, targetSecretContext("inst_1", "a"))).toBe("whsec-1");
    expect(openSecret(keyring, t.bot_token!, targetBotTokenContext("inst_1", "t"))).toBe("1:tok");
    expect(() => openSecret(keyring, a.secret!, targetSecretContext("inst_2", "a"))).toThrow();
    expect(() => openSecret(keyring, a.secret!, targetBotTokenContext("inst_1", "a"))).toThrow();
    expect(redactedConfig("webhook-push", stored)).toEqual({
      targets: [
        { id: "a", type: "webhook", url: "http://127.0.0.1:1/a", secret: "[redacted]", enabled: true },
        { id: "t", type: "telegram", bot_token: "[redacted]", connected_account_id: null, chat_id: 5, enabled: true },
      ],
    });
  });

  it("keep omitted secrets on update, drop them on null, and switch a bot to a connected account", async () => {
    const first = await storePushConfig(
      parse([
        { id: "a", type: "webhook", url: "http://127.0.0.1:1/a", secret: "s" },
        { id: "b", type: "webhook", url: "http://127.0.0.1:1/b", secret: "s" },
        { id: "t", type: "telegram", bot_token: "1:tok", chat_id: "c" },
      ]),
      null,
      "inst_1",
      keyring,
      open,
    );
    const next = await storePushConfig(
      parse([
        { id: "a", type: "webhook", url: "http://127.0.0.1:1/a2" },
        { id: "b", type: "webhook", url: "http://127.0.0.1:1/b", secret: null },
        { id: "t", type: "telegram", connected_account_id: "ca_1", chat_id: "c" },
      ]),
      first,
      "inst_1",
      keyring,
      open,
    );
    expect(next.targets[0]).toMatchObject({ url: "http://127.0.0.1:1/a2", secret: first.targets[0]!.type === "webhook" ? first.targets[0]!.secret : null });
    expect(next.targets[1]).toMatchObject({ secret: null });
    expect(next.targets[2]).toMatchObject({ bot_token: null, connected_account_id: "ca_1" });
  });

  it("refuse a telegram target without a token or account, or with both", async () => {
    await expect(storePushConfig(parse([{ id: "t", type: "telegram", chat_id: 1 }]), null, "i", keyring, open)).rejects.toMatchObject({
      code: "invalid_request",
    });
    await expect(
      storePushConfig(parse([{ id: "t", type: "telegram", chat_id: 1, bot_token: "1:x", connected_account_id: "ca" }]), null, "i", keyring, open),
    ).rejects.toMatchObject({
      code: "invalid_request",
    });
  });

  it("refuse loopback, private and link-local URLs unless private targets are allowed", async () => {
    for (const url of ["http://127.0.0.1/x", "http://localhost/x", "http://10.0.0.1/x", "http://169.254.169.254/x", "http://[::1]/x"]) {
      await expect(storePushConfig(parse([{ id: "a", type: "webhook", url }]), null, "i", keyring, closed), url).rejects.toMatchObject({
        code: "validation_failed",
      });
      await expect(storeSocialOpsConfig({ reply_webhook_url: url }, null, "i", keyring, closed), url).rejects.toMatchObject({ code: "validation_failed" });
    }
    await expect(storePushConfig(parse([{ id: "a", type: "webhook", url: "http://127.0.0.1/x" }]), null, "i", keyring, open)).resolves.toBeTruthy();
  });

  it("validate target ids, URLs and uniqueness", () => {
    expect(PushConfigInput.safeParse({ targets: [{ id: "a", type: "webhook", url: "ftp://x" }] }).success).toBe(false);
    expect(PushConfigInput.safeParse({ targets: [{ id: "a b", type: "webhook", url: "http://x" }] }).success).toBe(false);
    expect(
      PushConfigInput.safeParse({
        targets: [
          { id: "a", type: "webhook", url: "http://x" },
          { id: "a", type: "webhook", url: "http://y" },
        ],
      }).success,
    ).toBe(false);
  });
});
