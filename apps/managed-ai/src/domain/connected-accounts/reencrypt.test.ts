import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectedAccountContext, instanceKeyContext, openCredential } from "../credentials.js";
import { parseKeyring } from "../../crypto/keyring.js";
import { ProviderClient } from "../../providers/openai.js";
import { createTestContext, KEY_1, KEY_2, type TestContext } from "../../testing/context.js";
import { putInstance } from "../instances/put.js";
import { createConnectedAccount } from "./create.js";
import { reencryptCustomerSecrets } from "./reencrypt.js";

const actor = "user:usr_1";
let t: TestContext;

beforeAll(async () => {
  t = await createTestContext({ keyring: parseKeyring(KEY_1), provider: new ProviderClient({ headersMs: 1_000, idleMs: 1_000 }, { allowPrivate: true }) });
});
afterAll(() => t?.close());

describe("reencryptCustomerSecrets (key rotation)", () => {
  it("re-seals byok keys and account secrets under the current key, and reports what it cannot open", async () => {
    const account = await createConnectedAccount({ ctx: t.ctx, input: { actor, tenant_id: "ten_1", provider: "telegram", name: "bot", secret: "tok-1" } });
    const instance = await putInstance({
      ctx: t.ctx,
      input: {
        actor,
        tenant_id: "ten_1",
        alias: "b",
        status: "active",
        mode: "byok",
        provider: "openai",
        base_url: "http://127.0.0.1:9/v1",
        default_model: "m",
        api_key: "sk-b",
      },
    });
    const rotated = { ...t.ctx, keyring: parseKeyring(`${KEY_2},${KEY_1}`) };
    expect(await reencryptCustomerSecrets({ ctx: rotated })).toEqual({ reencrypted: 2, current: 0, failed: [] });
    const onlyK2 = parseKeyring(KEY_2);
    const row = await t.ctx.prisma.serviceInstance.findUniqueOrThrow({ where: { id: instance.id } });
    expect(row.updatedAt).toEqual(instance.updatedAt);
    expect(openCredential(onlyK2, { ciphertext: row.apiKeyCiphertext!, keyId: row.apiKeyKeyId! }, instanceKeyContext(instance.id))).toBe("sk-b");
    const acct = await t.ctx.prisma.connectedAccount.findUniqueOrThrow({ where: { id: account.id } });
    expect(openCredential(onlyK2, { ciphertext: acct.secretCiphertext, keyId: acct.secretKeyId }, connectedAccountContext(account.id))).toBe("tok-1");
    expect(await reencryptCustomerSecrets({ ctx: rotated })).toEqual({ reencrypted: 0, current: 2, failed: [] });

    const stranger = { ...t.ctx, keyring: parseKeyring(`k3:${randomBytes(32).toString("base64")}`) };
    expect((await reencryptCustomerSecrets({ ctx: stranger })).failed.sort()).toEqual([account.id, instance.id].sort());
    expect(JSON.stringify(t.logs)).not.toMatch(/sk-b|tok-1/);
  });
});
