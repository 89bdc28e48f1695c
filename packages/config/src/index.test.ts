import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, describeEnv, env, loadEnv, redactConfig, serviceEnvShape } from "./index.js";

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
