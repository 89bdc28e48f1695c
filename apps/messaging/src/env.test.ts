import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadEnv } from "./env.js";

const PRODUCTION = {
  NODE_ENV: "production",
  DATABASE_URL: "postgresql://messaging:own-password@db:5432/postgres",
  SERVICE_TOKEN: randomBytes(32).toString("hex"),
  ENCRYPTION_KEYS: `k1:${randomBytes(32).toString("base64")}`,
  GRPC_TLS_CA: "/etc/gateway/tls/ca.crt",
  GRPC_TLS_CERT: "/etc/gateway/tls/tls.crt",
  GRPC_TLS_KEY: "/etc/gateway/tls/tls.key",
};

describe("messaging environment", () => {
  it("starts in production on secrets of the operator's own", () => {
    expect(loadEnv(PRODUCTION).ALLOW_PRIVATE_TARGETS).toBe(false);
  });

  it("refuses in production the switch that turns off every check of push, reply and conversation webhook URLs", () => {
    expect(() => loadEnv({ ...PRODUCTION, ALLOW_PRIVATE_TARGETS: "true" })).toThrow(/ALLOW_PRIVATE_TARGETS: .*refused in production/);
    expect(loadEnv({ ALLOW_PRIVATE_TARGETS: "true" }).ALLOW_PRIVATE_TARGETS).toBe(true);
  });

  it("refuses in production the encryption keys compose shipped", () => {
    expect(() => loadEnv({ ...PRODUCTION, ENCRYPTION_KEYS: "compose-messaging:dKGyJh6JNudI0Ii+dFSU3RedBqAH9Vgw91KOTkdNnmI=" })).toThrow(
      /ENCRYPTION_KEYS: must be set in production/,
    );
  });
});
