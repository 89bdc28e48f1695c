import { z } from "zod";
import { address, bool, int, oneOf, port, secret, str, url } from "./fields.js";
import { isShippedPlaceholder, PLACEHOLDER_MESSAGE } from "./placeholders.js";

export * as env from "./fields.js";
export { isShippedPlaceholder, PLACEHOLDER_MESSAGE } from "./placeholders.js";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/**
 * Parse a source (usually `process.env`, passed in by main) against a schema.
 * The error lists each bad variable and why, never its value.
 *
 * In production (`NODE_ENV=production`) every secret must be set explicitly to
 * a value of the operator's own: a secret left at its local default, or equal
 * to a placeholder the project ships (compose, .env.example, the Kubernetes
 * example), is refused (docs/decisions/0182).
 */
export function loadEnv<S extends z.ZodObject>(schema: S, source: Record<string, string | undefined>): z.output<S> {
  const cleaned: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = source[key];
    if (value !== undefined && value !== "") cleaned[key] = value;
  }
  const result = schema.safeParse(cleaned);
  const issues = result.success ? [] : result.error.issues.map((issue) => `  ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  const production = (result.success ? (result.data as { NODE_ENV?: unknown }).NODE_ENV : cleaned.NODE_ENV) === "production";
  issues.push(...groupIssues(schema, cleaned, production));
  if (production) {
    for (const [key, raw] of Object.entries(schema.shape)) {
      const field = raw as z.ZodType;
      if (!isSecret(field)) continue;
      const value = cleaned[key];
      const fallback = field.safeParse(undefined);
      const usesDefault = value === undefined && fallback.success && fallback.data !== undefined;
      if (usesDefault || (value !== undefined && isShippedPlaceholder(value))) {
        const line = `  ${key}: ${PLACEHOLDER_MESSAGE}`;
        if (!issues.includes(line)) issues.push(line);
      }
    }
  }
  if (issues.length > 0 || !result.success) throw new ConfigError(`invalid configuration:\n${issues.join("\n")}`);
  return result.data;
}

/**
 * Variables that only work together (meta `group`: every one of the group set, or none)
 * and groups production needs (meta `production`: the reason, e.g. gRPC's TLS files,
 * docs/decisions/0230). One line per variable, naming it, never its value.
 */
function groupIssues(schema: z.ZodObject, cleaned: Record<string, string>, production: boolean): string[] {
  const groups = new Map<string, { names: string[]; production?: string }>();
  for (const [key, raw] of Object.entries(schema.shape)) {
    const meta = (raw as z.ZodType).meta() as { group?: string; production?: string } | undefined;
    if (!meta?.group) continue;
    const group = groups.get(meta.group) ?? { names: [] };
    group.names.push(key);
    if (meta.production) group.production = meta.production;
    groups.set(meta.group, group);
  }
  const issues: string[] = [];
  for (const { names, production: why } of groups.values()) {
    const missing = names.filter((name) => cleaned[name] === undefined);
    if (missing.length === 0) continue;
    if (missing.length < names.length) {
      for (const name of missing) issues.push(`  ${name}: must be set together with ${names.filter((n) => n !== name).join(" and ")} (all of them or none)`);
    } else if (production && why) {
      for (const name of missing) issues.push(`  ${name}: must be set in production: ${why}`);
    }
  }
  return issues;
}

function isSecret(field: z.ZodType): boolean {
  return Boolean((field.meta() as { secret?: boolean } | undefined)?.secret);
}

/** The config with secret values replaced, fit for a start-up log line. */
export function redactConfig<S extends z.ZodObject>(schema: S, config: z.output<S>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config as Record<string, unknown>)) {
    const field = schema.shape[key] as z.ZodType | undefined;
    out[key] = field && isSecret(field) ? "[redacted]" : value;
  }
  return out;
}

export type EnvDoc = { name: string; required: boolean; default: string; description: string; secret: boolean };

/** One row per variable, for the generated documentation. */
export function describeEnv(schema: z.ZodObject): EnvDoc[] {
  return Object.entries(schema.shape).map(([name, raw]) => {
    const field = raw as z.ZodType;
    const fallback = field.safeParse(undefined);
    const secretField = isSecret(field);
    let shown = "";
    if (fallback.success && fallback.data !== undefined) shown = secretField ? "(local default)" : String(fallback.data);
    return {
      name,
      required: !fallback.success,
      default: shown,
      description: field.description ?? "",
      secret: secretField,
    };
  });
}

export type ServiceDefaults = {
  /** The service's name: `ledger`, `managed-ai`, ... */
  service: string;
  grpcPort: number;
  metricsPort: number;
};

/**
 * A fixed service token for local runs and tests only: `loadEnv` refuses it in
 * production like every other local default of a secret.
 */
export const DEV_SERVICE_TOKEN = "dev-only-service-token-not-for-production-0123456789";

/**
 * The shared token every gRPC call between the gateway's processes carries and
 * every server checks (docs/decisions/0183). Read by every service and the edge.
 */
export function serviceTokenEnvShape() {
  return {
    SERVICE_TOKEN: z
      .string()
      .min(32, "must be at least 32 characters")
      .default(DEV_SERVICE_TOKEN)
      .describe(
        "Shared secret every gRPC call between the gateway's processes carries (metadata) and every gRPC server checks before any handler runs; at least 32 characters, the same in every service. Required in production (e.g. `openssl rand -hex 32`).",
      )
      .meta({ secret: true }),
  };
}

const GRPC_TLS_IN_PRODUCTION = "gRPC between the gateway's processes runs over mutual TLS, never in plaintext (docs/decisions/0230)";

/** Meta of the three TLS files: all three or none; production needs them. */
const grpcTlsMeta = { group: "GRPC_TLS", production: GRPC_TLS_IN_PRODUCTION };

/**
 * Mutual TLS between the gateway's processes (docs/decisions/0230): the CA every peer's
 * certificate must chain to, and this process's own certificate and key, as paths to
 * PEM files. All three or none; unset, gRPC runs in plaintext, which production refuses.
 * Read by every service (server and clients) and the edge (clients).
 */
export function grpcTlsEnvShape() {
  return {
    GRPC_TLS_CA: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Path to the PEM certificate of the CA that signs every gateway process's certificate: this server accepts only clients with a certificate it signed, and this process's clients accept only servers with one. With GRPC_TLS_CERT and GRPC_TLS_KEY (all three or none); unset: plaintext gRPC, refused in production. `./scripts/certs.sh` makes a local CA.",
      )
      .meta(grpcTlsMeta),
    GRPC_TLS_CERT: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Path to this process's PEM certificate (signed by GRPC_TLS_CA; its names must include the host its callers dial, e.g. `ledger`): served by its gRPC server and presented by its clients.",
      )
      .meta(grpcTlsMeta),
    GRPC_TLS_KEY: z.string().min(1).optional().describe("Path to the PEM private key of GRPC_TLS_CERT.").meta(grpcTlsMeta),
  };
}

/** Variables every gRPC service reads, with local-run defaults. */
export function serviceEnvShape(defaults: ServiceDefaults) {
  return {
    ...baseEnvShape(),
    ...serviceTokenEnvShape(),
    ...grpcTlsEnvShape(),
    GRPC_HOST: str("Interface the gRPC server binds to.", "127.0.0.1"),
    GRPC_PORT: port("gRPC port of this service.", defaults.grpcPort),
    GRPC_HEALTH_PORT: port(
      "A second, plaintext port that serves only the standard gRPC health service (SERVING / NOT_SERVING, nothing else), for probes that cannot speak TLS such as the kubelet's `grpc` probes; 0: none (the health service is on GRPC_PORT as well, behind TLS when it is on).",
      0,
    ),
    METRICS_PORT: port("Port of the Prometheus `/metrics` HTTP endpoint (0 disables it).", defaults.metricsPort),
    ...databaseEnvShape(`gateway_${defaults.service.replaceAll("-", "_")}`),
    ...natsEnvShape(),
  };
}

export function baseEnvShape() {
  return {
    NODE_ENV: oneOf("Runtime mode.", ["development", "test", "production"] as const, "development"),
    LOG_LEVEL: oneOf("Minimum log level.", ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const, "info"),
    LOG_COALESCE_MS: int(
      "Log lines below warn wait up to this long and go to stdout together, one write instead of one per line (an access-log line per request); warnings and worse go at once; 0: every line at once (docs/decisions/0306).",
      100,
      { min: 0, max: 1_000 },
    ),
    SHUTDOWN_TIMEOUT_MS: int("Grace period for in-flight work on SIGTERM before connections are cut.", 10_000, { min: 0 }),
    ...telemetryEnvShape(),
  };
}

/** OpenTelemetry tracing (docs/decisions/0163): off unless an endpoint is set. Standard OTEL_* names. */
export function telemetryEnvShape() {
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: z
      .string()
      .optional()
      .refine((value) => {
        if (value === undefined) return true;
        try {
          return ["http:", "https:"].includes(new URL(value).protocol);
        } catch {
          return false;
        }
      }, "must be an http(s) URL")
      .describe(
        "Base URL of an OTLP/HTTP trace collector (e.g. `http://otel-collector:4318`); spans go to `<url>/v1/traces`. Unset: no tracing, and the SDK is not even loaded.",
      ),
    OTEL_EXPORTER_OTLP_PROTOCOL: oneOf(
      "Encoding of exported spans (OTLP over gRPC is not supported).",
      ["http/protobuf", "http/json"] as const,
      "http/protobuf",
    ),
    OTEL_SERVICE_NAME: z.string().min(1).optional().describe("`service.name` of this process's spans; unset: the service's own name (`edge`, `ledger`, ...)."),
    OTEL_BSP_SCHEDULE_DELAY: int("Longest wait, in ms, before ended spans are exported in one batch.", 5_000, { min: 1, max: 60_000 }),
  };
}

export function databaseEnvShape(defaultName: string) {
  return {
    DATABASE_URL: secret(
      "PostgreSQL server URL. The database name in it is replaced by DATABASE_NAME: each service owns its own database.",
      "postgresql://postgres@127.0.0.1:5432/postgres",
    ),
    DATABASE_NAME: str("Name of this service's own database; created on start when missing.", defaultName),
    DATABASE_POOL_SIZE: int("Maximum PostgreSQL connections of this process.", 10, { min: 1, max: 200 }),
    MIGRATE_ON_START: bool("Apply pending migrations on start (under an advisory lock, safe with replicas).", true),
    OUTBOX_POLL_MS: int("How often the outbox relay looks for unpublished events it was not told about, while there are some.", 500, { min: 10 }),
    OUTBOX_POLL_MAX_MS: int(
      "While their polls find nothing, the event relays and the delivery queues (callbacks, conversation webhooks) double their poll interval up to this; a commit of this process, or a retry falling due, wakes them at once. It bounds how long events another replica committed and did not publish (a crash) wait for a survivor.",
      60_000,
      { min: 10, max: 600_000 },
    ),
    OUTBOX_LINGER_MS: int("After a commit with events, how long the outbox relay waits for more before publishing them in one batch (0: at once).", 20, {
      min: 0,
      max: 1_000,
    }),
    OUTBOX_LINGER_MAX_MS: int(
      "The event relays' linger grows as the rate of events falls, up to this: a round that carried less than a quarter of a batch doubles it, a fuller one halves it, down to OUTBOX_LINGER_MS (fewer rounds per event at low rates; an event still leaves within it of its commit).",
      100,
      { min: 0, max: 1_000 },
    ),
    CONSUMER_LINGER_MS: int("How long an event consumer waits for more events before committing a batch that is not full (0: at once).", 50, {
      min: 0,
      max: 5_000,
    }),
  };
}

export function natsEnvShape() {
  return {
    NATS_URL: url("NATS server URL (JetStream enabled).", "nats://127.0.0.1:4222", ["nats:", "tls:"]),
    NATS_NAMESPACE: z
      .string()
      .regex(/^[A-Za-z0-9_]{1,32}$/)
      .default("gateway")
      .describe("Prefix of the JetStream stream and every subject, so several stacks can share one NATS."),
  };
}

export { address, bool, int, oneOf, port, secret, str, url };
