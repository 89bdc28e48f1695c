import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, DEV_SERVICE_TOKEN, describeEnv, env, loadEnv, redactConfig, serviceEnvShape } from "./index.js";

const schema = z.object({
  ...serviceEnvShape({ service: "managed-ai", grpcPort: 50052, metricsPort: 9102 }),
  JWT_SECRET: env.secret("Signing key."),
  FLAG: env.bool("A switch.", false),
  LIMIT: env.int("A bound.", 10, { min: 1, max: 100 }),
});

describe("loadEnv", () => {
  it("applies local defaults when nothing is configured", () => {
    const cfg = loadEnv(schema, { JWT_SECRET: "s3cret-s3cret" });
    expect(cfg.GRPC_PORT).toBe(50052);
    expect(cfg.GRPC_HOST).toBe("127.0.0.1");
    expect(cfg.DATABASE_NAME).toBe("gateway_managed_ai");
    expect(cfg.NATS_URL).toBe("nats://127.0.0.1:4222");
    expect(cfg.MIGRATE_ON_START).toBe(true);
    expect(cfg.FLAG).toBe(false);
    expect(cfg.LOG_LEVEL).toBe("info");
  });

  it("coerces numbers and booleans and treats empty strings as unset", () => {
    const cfg = loadEnv(schema, { JWT_SECRET: "x", GRPC_PORT: "6000", FLAG: "1", LIMIT: "", MIGRATE_ON_START: "false" });
    expect(cfg.GRPC_PORT).toBe(6000);
    expect(cfg.FLAG).toBe(true);
    expect(cfg.LIMIT).toBe(10);
    expect(cfg.MIGRATE_ON_START).toBe(false);
  });

  it("reports every bad variable by name without echoing secret values", () => {
    let error: unknown;
    try {
      loadEnv(schema, { GRPC_PORT: "70000", LIMIT: "0", NATS_URL: "http://nope", FLAG: "maybe" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ["GRPC_PORT", "LIMIT", "NATS_URL", "FLAG", "JWT_SECRET"]) expect(message).toContain(name);
    expect(message).not.toContain("70000");
  });

  it("ignores variables the schema does not declare", () => {
    const cfg = loadEnv(schema, { JWT_SECRET: "x", PATH: "/bin" }) as Record<string, unknown>;
    expect(cfg.PATH).toBeUndefined();
  });
});

describe("redactConfig", () => {
  it("hides secrets and keeps the rest", () => {
    const cfg = loadEnv(schema, { JWT_SECRET: "top-secret-value", DATABASE_URL: "postgresql://u:pw@db:5432/x" });
    const shown = redactConfig(schema, cfg);
    expect(shown.JWT_SECRET).toBe("[redacted]");
    expect(shown.DATABASE_URL).toBe("[redacted]");
    expect(shown.GRPC_PORT).toBe(50052);
    expect(JSON.stringify(shown)).not.toContain("top-secret-value");
  });
});

describe("describeEnv", () => {
  it("documents every variable with its default, requiredness and description", () => {
    const rows = describeEnv(schema);
    expect(rows.map((r) => r.name)).toEqual(Object.keys(schema.shape));
    for (const row of rows) expect(row.description.length).toBeGreaterThan(0);
    expect(rows.find((r) => r.name === "JWT_SECRET")).toMatchObject({ required: true, secret: true, default: "" });
    expect(rows.find((r) => r.name === "GRPC_PORT")).toMatchObject({ required: false, default: "50052" });
    expect(rows.find((r) => r.name === "DATABASE_URL")?.default).not.toContain("postgres@");
  });
});

describe("optional variables", () => {
  it("keep their description and secrecy, and document no default", () => {
    const s = z.object({ TOKEN: env.optionalSecret("A token."), NAME: env.str("A name.").optional().describe("A name.") });
    const rows = describeEnv(s);
    expect(rows[0]).toMatchObject({ name: "TOKEN", required: false, default: "", description: "A token.", secret: true });
    expect(rows[1]).toMatchObject({ name: "NAME", required: false, default: "" });
    expect(redactConfig(s, loadEnv(s, { TOKEN: "abc" })).TOKEN).toBe("[redacted]");
  });
});

describe("production refuses the placeholders the project ships", () => {
  const own = {
    NODE_ENV: "production",
    JWT_SECRET: "an-operator-chosen-secret-of-enough-length",
    SERVICE_TOKEN: "an-operator-chosen-service-token-0123456789",
    DATABASE_URL: "postgresql://gateway:pw-of-their-own@db:5432/postgres",
    GRPC_TLS_CA: "/etc/gateway/tls/ca.crt",
    GRPC_TLS_CERT: "/etc/gateway/tls/tls.crt",
    GRPC_TLS_KEY: "/etc/gateway/tls/tls.key",
  };
  const failure = (source: Record<string, string>) => {
    try {
      loadEnv(schema, source);
    } catch (err) {
      return err as Error;
    }
    throw new Error("accepted");
  };

  it("accepts secrets of the operator's own", () => {
    expect(loadEnv(schema, own).SERVICE_TOKEN).toBe(own.SERVICE_TOKEN);
  });

  it("refuses a secret left at its local default, naming it", () => {
    const { SERVICE_TOKEN: _, ...rest } = own;
    const err = failure(rest);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/SERVICE_TOKEN: is a placeholder or local default shipped with the project and is refused in production/);
    expect(err.message).not.toContain(DEV_SERVICE_TOKEN);
    const { DATABASE_URL: __, ...noDb } = own;
    expect(failure(noDb).message).toMatch(/DATABASE_URL: is a placeholder/);
  });

  it.each([
    ["JWT_SECRET", "compose-local-jwt-secret-change-me-0123456789"],
    ["JWT_SECRET", "replace-with-at-least-32-random-characters-000"],
    ["JWT_SECRET", "REPLACE-ME-with-32-random-characters-0000000"],
    ["DATABASE_URL", "postgresql://postgres:postgres@postgres:5432/postgres"],
    ["DATABASE_URL", "postgresql://postgres:REPLACE-ME@postgres:5432/postgres"],
    ["SERVICE_TOKEN", "change-me-service-token-0123456789abcdef"],
  ])("refuses %s = a shipped placeholder, without echoing it", (name, value) => {
    const err = failure({ ...own, [name]: value });
    expect(err.message).toContain(`${name}: is a placeholder`);
    expect(err.message).not.toContain(value);
  });

  it("lets development and test runs keep the local defaults and placeholders", () => {
    expect(loadEnv(schema, { JWT_SECRET: "compose-local-jwt-secret-change-me-0123456789" }).SERVICE_TOKEN).toBe(DEV_SERVICE_TOKEN);
    expect(loadEnv(schema, { NODE_ENV: "test", JWT_SECRET: "x" }).SERVICE_TOKEN).toBe(DEV_SERVICE_TOKEN);
  });

  it("wants a service token of at least 32 characters", () => {
    expect(failure({ ...own, NODE_ENV: "development", SERVICE_TOKEN: "short" }).message).toMatch(/SERVICE_TOKEN: must be at least 32 characters/);
  });
});

describe("gRPC over TLS (docs/decisions/0230)", () => {
  const tls = { GRPC_TLS_CA: "/certs/ca.crt", GRPC_TLS_CERT: "/certs/ledger.crt", GRPC_TLS_KEY: "/certs/ledger.key" };
  const own = {
    JWT_SECRET: "an-own-jwt-secret-0123456789",
    SERVICE_TOKEN: "an-own-service-token-0123456789abcdef",
    DATABASE_URL: "postgresql://u:own@db/postgres",
  };

  it("takes the three files, or none (plaintext) outside production", () => {
    expect(loadEnv(schema, { JWT_SECRET: "x", ...tls })).toMatchObject(tls);
    expect(loadEnv(schema, { JWT_SECRET: "x" }).GRPC_TLS_CA).toBeUndefined();
    expect(describeEnv(schema).find((d) => d.name === "GRPC_TLS_CA")?.description).toContain("CA");
  });

  it("refuses some of them without the others, naming each missing one", () => {
    expect(() => loadEnv(schema, { JWT_SECRET: "x", GRPC_TLS_CA: tls.GRPC_TLS_CA })).toThrow(
      /GRPC_TLS_CERT: must be set together with GRPC_TLS_CA and GRPC_TLS_KEY[\s\S]*GRPC_TLS_KEY: must be set together/,
    );
  });

  it("production refuses plaintext gRPC: every TLS variable is named", () => {
    let message = "";
    try {
      loadEnv(schema, { ...own, NODE_ENV: "production" });
    } catch (err) {
      message = (err as Error).message;
    }
    for (const name of ["GRPC_TLS_CA", "GRPC_TLS_CERT", "GRPC_TLS_KEY"]) expect(message).toContain(`${name}: must be set in production: gRPC between`);
    expect(loadEnv(schema, { ...own, NODE_ENV: "production", ...tls }).GRPC_TLS_CERT).toBe(tls.GRPC_TLS_CERT);
  });
});
