import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CredentialError, openCredential, sealCredential } from "./seal.js";

const upstreamKeyContext = (id: string) => `test.upstream.api_key:${id}`;
import { DEV_ENCRYPTION_KEYS, KeyringError, parseKeyring, usesDevelopmentKey } from "./keyring.js";

const material = () => randomBytes(32).toString("base64");
const K1 = `k1:${material()}`;
const K2 = `k2:${material()}`;
const SECRET = "sk-live-0123456789abcdef";

describe("keyring", () => {
  it("takes the first key as current and keeps the others for decryption", () => {
    const ring = parseKeyring(` ${K2} , ${K1} `);
    expect(ring.currentId).toBe("k2");
    expect([...ring.keys.keys()]).toEqual(["k2", "k1"]);
    expect(ring.keys.get("k1")).toHaveLength(32);
  });

  it("refuses malformed lists without echoing key material", () => {
    const bad = material().slice(0, 20);
    for (const value of ["", "k1", `k1:${bad}`, `:${material()}`, `k 1:${material()}`, `${K1},${K1}`, `k1:${material()}!`]) {
      let error: unknown;
      try {
        parseKeyring(value);
      } catch (err) {
        error = err;
      }
      expect(error, value).toBeInstanceOf(KeyringError);
      expect((error as Error).message).not.toContain(bad);
      expect((error as Error).message).not.toContain(K1.slice(3));
    }
  });

  it("recognises the development key whatever its id", () => {
    expect(usesDevelopmentKey(parseKeyring(DEV_ENCRYPTION_KEYS))).toBe(true);
    expect(usesDevelopmentKey(parseKeyring(`${K1},${DEV_ENCRYPTION_KEYS.replace("dev:", "other:")}`))).toBe(true);
    expect(usesDevelopmentKey(parseKeyring(K1))).toBe(false);
    // The example keys docker-compose.yml and the Kubernetes Secret once carried (decision 0182).
    expect(usesDevelopmentKey(parseKeyring(`${K1},compose:Z94FChHbeVQ6pzIi874kNfxL8vIeVAWCYazZZhiYMfY=`))).toBe(true);
    expect(usesDevelopmentKey(parseKeyring("m:dKGyJh6JNudI0Ii+dFSU3RedBqAH9Vgw91KOTkdNnmI="))).toBe(true);
    expect(usesDevelopmentKey(parseKeyring("k1:CRy1nUeDXnGD0MqanhcQ6B5xTs0R5Fu3mpJgLio0K7w="))).toBe(true);
  });
});

describe("sealed credentials (AES-256-GCM)", () => {
  const ring = parseKeyring(`${K2},${K1}`);
  const context = upstreamKeyContext("up_1");

  it("round-trips, with a fresh nonce each time and the key id beside it", () => {
    const a = sealCredential(ring, SECRET, context);
    const b = sealCredential(ring, SECRET, context);
    expect(a.keyId).toBe("k2");
    expect(Buffer.from(a.ciphertext).equals(Buffer.from(b.ciphertext))).toBe(false);
    expect(Buffer.from(a.ciphertext).subarray(0, 12).equals(Buffer.from(b.ciphertext).subarray(0, 12))).toBe(false);
    expect(a.ciphertext.length).toBe(12 + Buffer.byteLength(SECRET) + 16);
    expect(Buffer.from(a.ciphertext).includes(Buffer.from(SECRET))).toBe(false);
    expect(openCredential(ring, a, context)).toBe(SECRET);
  });

  it("opens what an older key sealed, while sealing with the current one (rotation)", () => {
    const old = sealCredential(parseKeyring(K1), SECRET, context);
    expect(old.keyId).toBe("k1");
    expect(openCredential(ring, old, context)).toBe(SECRET);
    expect(() => openCredential(parseKeyring(K2), old, context)).toThrow(new CredentialError("key k1 is not in ENCRYPTION_KEYS"));
  });

  it("opens a blob once per object, and never serves what it opened to another context, key id, keyring or changed bytes", () => {
    const sealed = sealCredential(ring, SECRET, context);
    expect(openCredential(ring, sealed, context)).toBe(SECRET);
    expect(openCredential(ring, sealed, context)).toBe(SECRET);
    expect(() => openCredential(ring, sealed, upstreamKeyContext("up_2"))).toThrow(CredentialError);
    expect(() => openCredential(ring, { ...sealed, keyId: "k1" }, context)).toThrow(CredentialError);
    expect(() => openCredential(parseKeyring(K1), sealed, context)).toThrow(new CredentialError("key k2 is not in ENCRYPTION_KEYS"));
    sealed.ciphertext[14] = sealed.ciphertext[14]! ^ 1; // the same object, changed in place
    expect(() => openCredential(ring, sealed, context)).toThrow(CredentialError);
  });

  it("refuses a blob moved to another upstream, tampered with, or labelled with another key", () => {
    const sealed = sealCredential(ring, SECRET, context);
    expect(() => openCredential(ring, sealed, upstreamKeyContext("up_2"))).toThrow(CredentialError);
    const tampered = Buffer.from(sealed.ciphertext);
    tampered[14] = tampered[14]! ^ 1;
    expect(() => openCredential(ring, { ciphertext: tampered, keyId: "k2" }, context)).toThrow(CredentialError);
    expect(() => openCredential(ring, { ...sealed, keyId: "k1" }, context)).toThrow(CredentialError);
    expect(() => openCredential(ring, { ciphertext: new Uint8Array(10), keyId: "k2" }, context)).toThrow("truncated");
    try {
      openCredential(ring, sealed, upstreamKeyContext("up_2"));
    } catch (err) {
      expect((err as Error).message).not.toContain(SECRET);
    }
  });
});
