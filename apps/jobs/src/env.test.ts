import { describe, expect, it } from "vitest";
import { DEV_ENCRYPTION_KEYS } from "@gateway/secrets";
import { TEST_KEYS } from "./testing/context.js";
import { loadEnv } from "./env.js";

describe("jobs configuration", () => {
  it("defaults to sandbox mode and the documented callback schedule", () => {
    const env = loadEnv({});
    expect(env.TRON_MODE).toBe("sandbox");
    expect(env.CALLBACK_BASE_DELAY_MS).toBe(1_000);
    expect(env.CALLBACK_ALLOW_HTTP_LOOPBACK).toBe(false);
  });

  it("refuses the development key and the loopback flag in production", () => {
    expect(() => loadEnv({ NODE_ENV: "production", ENCRYPTION_KEYS: DEV_ENCRYPTION_KEYS })).toThrow(/ENCRYPTION_KEYS/);
    const production = {
      NODE_ENV: "production",
      DATABASE_URL: "postgresql://jobs:own-password@db:5432/postgres",
      SERVICE_TOKEN: "a-service-token-of-the-operators-own-0123456789",
      GRPC_TLS_CA: "/etc/gateway/tls/ca.crt",
      GRPC_TLS_CERT: "/etc/gateway/tls/tls.crt",
      GRPC_TLS_KEY: "/etc/gateway/tls/tls.key",
    };
    expect(() => loadEnv({ ...production, ENCRYPTION_KEYS: TEST_KEYS, CALLBACK_ALLOW_HTTP_LOOPBACK: "true" })).toThrow(/CALLBACK_ALLOW_HTTP_LOOPBACK/);
    expect(loadEnv({ ...production, ENCRYPTION_KEYS: TEST_KEYS }).NODE_ENV).toBe("production");
    expect(() => loadEnv({ NODE_ENV: "production", ENCRYPTION_KEYS: TEST_KEYS })).toThrow(/SERVICE_TOKEN: is a placeholder/);
    expect(() => loadEnv({ TRON_MODE: "mainnet" })).toThrow(/TRON_MODE/);
  });

  it("chooses the generic provider by default and wants itrx's key and secret in live mode", () => {
    expect(loadEnv({}).TRON_PROVIDER).toBe("generic");
    expect(() => loadEnv({ TRON_MODE: "live", TRON_PROVIDER: "itrx" })).toThrow(
      /TRON_PROVIDER_API_KEY[\s\S]*TRON_PROVIDER_API_SECRET|TRON_PROVIDER_API_SECRET[\s\S]*TRON_PROVIDER_API_KEY/,
    );
    expect(() => loadEnv({ TRON_MODE: "live", TRON_PROVIDER: "itrx", TRON_PROVIDER_API_KEY: "k" })).toThrow(/TRON_PROVIDER_API_SECRET/);
    expect(loadEnv({ TRON_MODE: "live", TRON_PROVIDER: "itrx", TRON_PROVIDER_API_KEY: "k", TRON_PROVIDER_API_SECRET: "s" }).TRON_PROVIDER).toBe("itrx");
    expect(loadEnv({ TRON_PROVIDER: "itrx" }).TRON_MODE).toBe("sandbox");
  });
});
