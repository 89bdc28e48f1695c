import { randomBytes } from "node:crypto";
import { ConfigError } from "@gateway/config";
import { describe, expect, it } from "vitest";
import { DEV_ENCRYPTION_KEYS } from "./crypto/keyring.js";
import { loadEnv } from "./env.js";

/** What production needs besides the keys: every secret set to a value of the operator's own. */
const PRODUCTION = {
  NODE_ENV: "production",
  DATABASE_URL: "postgresql://gateway:own-password@db:5432/postgres",
  SERVICE_TOKEN: randomBytes(32).toString("hex"),
  GRPC_TLS_CA: "/etc/gateway/tls/ca.crt",
  GRPC_TLS_CERT: "/etc/gateway/tls/tls.crt",
  GRPC_TLS_KEY: "/etc/gateway/tls/tls.key",
};

describe("managed-ai environment", () => {
  it("runs locally on the development key and a short connection-test timeout", () => {
    const env = loadEnv({});
    expect(env.ENCRYPTION_KEYS).toBe(DEV_ENCRYPTION_KEYS);
    expect(env.UPSTREAM_TEST_TIMEOUT_MS).toBe(2_500);
  });

  it("refuses to start in production on the development key, and on malformed keys, without printing them", () => {
    expect(() => loadEnv({ NODE_ENV: "production" })).toThrow(/ENCRYPTION_KEYS: must be set in production/);
    const key = `prod:${randomBytes(32).toString("base64")}`;
    expect(loadEnv({ ...PRODUCTION, ENCRYPTION_KEYS: key }).ENCRYPTION_KEYS).toBe(key);
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

  it("refuses in production the switch that turns off the checks of customer URLs, and the shipped keys and token", () => {
    const key = `prod:${randomBytes(32).toString("base64")}`;
    expect(() => loadEnv({ ...PRODUCTION, ENCRYPTION_KEYS: key, ALLOW_PRIVATE_TARGETS: "true" })).toThrow(/ALLOW_PRIVATE_TARGETS: .*refused in production/);
    expect(loadEnv({ ENCRYPTION_KEYS: key, ALLOW_PRIVATE_TARGETS: "true" }).ALLOW_PRIVATE_TARGETS).toBe(true);
    expect(() => loadEnv({ ...PRODUCTION, ENCRYPTION_KEYS: "compose:Z94FChHbeVQ6pzIi874kNfxL8vIeVAWCYazZZhiYMfY=" })).toThrow(/ENCRYPTION_KEYS/);
    const { SERVICE_TOKEN: _, ...noToken } = PRODUCTION;
    expect(() => loadEnv({ ...noToken, ENCRYPTION_KEYS: key })).toThrow(/SERVICE_TOKEN: is a placeholder or local default/);
  });
});
