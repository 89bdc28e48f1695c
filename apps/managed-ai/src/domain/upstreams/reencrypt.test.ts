import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCredential, upstreamKeyContext } from "../credentials.js";
import { parseKeyring } from "../../crypto/keyring.js";
import { createTestContext, KEY_1, KEY_2, type TestContext } from "../../testing/context.js";
import { putUpstream } from "./put.js";
import { reencryptUpstreamKeys } from "./reencrypt.js";

const actor = "user:usr_op";
let t: TestContext;

beforeAll(async () => {
  // Before the rotation: k1 is the only key.
  t = await createTestContext({ keyring: parseKeyring(KEY_1) });
});
afterAll(() => t?.close());

const row = (id: string) => t.ctx.prisma.upstream.findUniqueOrThrow({ where: { id } });

describe("reencryptUpstreamKeys (key rotation)", () => {
  it("re-seals every credential under the current key, leaving versions and timestamps alone", async () => {
    for (const id of ["up_1", "up_2"])
      await putUpstream({ ctx: t.ctx, input: { id, provider: "openai", base_url: "http://x.example/v1", api_key: `sk-${id}`, actor } });
    await putUpstream({ ctx: t.ctx, input: { id: "up_nokey", provider: "openai", base_url: "http://x.example/v1", actor } });
    const before = await row("up_1");
    expect(before.apiKeyKeyId).toBe("k1");

    // Step 2 of a rotation: k2 becomes current, k1 stays for decryption.
    const rotated = { ...t.ctx, keyring: parseKeyring(`${KEY_2},${KEY_1}`) };
    expect(await reencryptUpstreamKeys({ ctx: rotated })).toEqual({ reencrypted: 2, current: 0, failed: [] });
    const after = await row("up_1");
    expect(after.apiKeyKeyId).toBe("k2");
    expect({ version: after.version, updatedAt: after.updatedAt }).toEqual({ version: before.version, updatedAt: before.updatedAt });
    // Step 3: k1 can go.
    const onlyK2 = parseKeyring(KEY_2);
    for (const id of ["up_1", "up_2"]) {
      const r = await row(id);
      expect(openCredential(onlyK2, { ciphertext: r.apiKeyCiphertext!, keyId: r.apiKeyKeyId! }, upstreamKeyContext(id))).toBe(`sk-${id}`);
    }
    expect((await row("up_nokey")).apiKeyKeyId).toBeNull();

    expect(await reencryptUpstreamKeys({ ctx: rotated })).toEqual({ reencrypted: 0, current: 2, failed: [] });
  });

  it("reports credentials whose key is missing and leaves them as they are", async () => {
    const stranger = { ...t.ctx, keyring: parseKeyring(`k3:${randomBytes(32).toString("base64")}`) };
    expect(await reencryptUpstreamKeys({ ctx: stranger })).toEqual({ reencrypted: 0, current: 0, failed: ["up_1", "up_2"] });
    expect((await row("up_1")).apiKeyKeyId).toBe("k2");
    expect(JSON.stringify(t.logs)).not.toMatch(/sk-up_/);
  });
});
