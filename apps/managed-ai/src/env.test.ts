import { randomBytes } from "node:crypto";
import { ConfigError } from "@gateway/config";
import { describe, expect, it } from "vitest";
import { DEV_ENCRYPTION_KEYS } from "./crypto/keyring.js";
import { loadEnv } from "./env.js";

describe("managed-ai environment", () => {
  it("runs locally on the development key and a short connection-test timeout", () => {
    const env = loadEnv({});
    expect(env.ENCRYPTION_KEYS).toBe(DEV_ENCRYPTION_KEYS);
    expect(env.UPSTREAM_TEST_TIMEOUT_MS).toBe(2_500);
  });

  it("refuses to start in production on the development key, and on malformed keys, without printing them", () => {
    expect(() => loadEnv({ NODE_ENV: "production" })).toThrow(/ENCRYPTION_KEYS: must be set in production/);
    const key = `prod:${randomBytes(32).toString("base64")}`;
    expect(loadEnv({ NODE_ENV: "production", ENCRYPTION_KEYS: key }).ENCRYPTION_KEYS).toBe(key);
    const short = randomBytes(16).toString("base64");
    try {
      loadEnv({ ENCRYPTION_KEYS: `k1:${short}` });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toContain("ENCRYPTION_KEYS: key k1: must be the base64 encoding of exactly 32 bytes");
      expect((err as Error).message).not.toContain(short);
    }
  });
});
