import { z } from "zod";
import {
  address,
  baseEnvShape,
  bool,
  databaseEnvShape,
  env,
  int,
  loadEnv as load,
  natsEnvShape,
  port,
  serviceTokenEnvShape,
  grpcTlsEnvShape,
  str,
  url,
} from "@gateway/config";

const DEV_JWT_SECRET = "dev-only-jwt-secret-change-me-0123456789";
const DEV_WIDGET_JWT_SECRET = "dev-only-widget-jwt-secret-change-me-0123";

export const EdgeEnv = z
  .object({
    ...baseEnvShape(),
    HOST: str("Interface the HTTP server binds to.", "127.0.0.1"),
    PORT: port("HTTP port of the gateway.", 8080),
    PUBLIC_URL: z.string().url().optional().describe("Public base URL, for the OpenAPI document's `servers` and printed links."),
    BODY_LIMIT_BYTES: int("Largest JSON body accepted; larger ones get 413.", 1_048_576, { min: 1_024, max: 100 * 1_048_576 }),
    TRUSTED_PROXY_CIDRS: str(
      "Comma-separated CIDRs of proxies whose CLIENT_IP_HEADER is believed; other peers are the client themselves.",
      "127.0.0.1/32,::1/128",
    ),
    CLIENT_IP_HEADER: str("Header carrying the client address, set by a trusted proxy. X-Forwarded-For is never read.", "X-Connecting-IP"),
    JWT_SECRET: env.secret("HS256 key for session access tokens, at least 32 characters; shared by all edge replicas. Required in production.", DEV_JWT_SECRET),
    ACCESS_TOKEN_TTL_SECONDS: int("Lifetime of a session access token.", 900, { min: 60, max: 86_400 }),
    REFRESH_TOKEN_TTL_SECONDS: int("Lifetime of a refresh token.", 30 * 86_400, { min: 3_600 }),
    SESSION_CACHE_TTL_MS: int("How long a replica trusts its cached view of a session (revocations also arrive over NATS at once).", 30_000, {
      min: 0,
      max: 300_000,
    }),
    WIDGET_JWT_SECRET: env.secret(
      "HS256 key for chat widget tokens, at least 32 characters, different from JWT_SECRET (a widget token opens widget routes only); shared by all edge replicas. Required in production.",
      DEV_WIDGET_JWT_SECRET,
    ),
    WIDGET_TOKEN_TTL_SECONDS: int("Lifetime of a widget access token (at most 15 minutes).", 600, { min: 30, max: 900 }),
    WIDGET_RATE_LIMIT_PER_MINUTE: int("Requests per widget session and minute, counted in Redis across edge replicas (0: no limit).", 120, {
      min: 0,
      max: 100_000,
    }),
    WIDGET_SESSION_CACHE_TTL_MS: int("How long a replica trusts its cached view of a widget session (revocations also arrive over NATS at once).", 30_000, {
      min: 0,
      max: 300_000,
    }),
    REDIS_URL: url(
      "Redis for API key limits (daily quota, per-minute rate, concurrency) and key versions, shared by all edge replicas.",
      "redis://127.0.0.1:6379",
      ["redis:", "rediss:"],
    ),
    REDIS_COMMAND_TIMEOUT_MS: int(
      "A Redis command unanswered for this long fails (503) and cuts the connection, so the calls after it fail at once until Redis answers again (docs/decisions/0235).",
      2_000,
      { min: 10, max: 60_000 },
    ),
    REDIS_RECONNECT_MAX_MS: int("Longest wait between two attempts to reconnect to Redis: how late limits come back after Redis does.", 200, {
      min: 10,
      max: 60_000,
    }),
    REDIS_KEY_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_]{1,32}$/)
      .default("gateway")
      .describe("Prefix of every Redis key, so several stacks can share one Redis."),
    KEY_CACHE_TTL_MS: int("How long a replica keeps a verified API key in memory (rotation and revocation still apply at once).", 60_000, {
      min: 0,
      max: 3_600_000,
    }),
    CONCURRENCY_LEASE_TTL_MS: int(
      "A concurrency slot held by a request expires after this long unless renewed, so slots of crashed replicas come back.",
      30_000,
      { min: 1_000 },
    ),
    CONCURRENCY_RELEASE_LINGER_MS: int(
      "A concurrency slot freed when a response ends is given back with the key's next admission on this replica if one comes within this long, else with a Redis command of its own (one command per request instead of two for a client that sends one request after another; other replicas see the slot free up to this much later, so set it only with one edge replica or routing that keeps a client on its replica; 0: at the end of the event loop's turn; docs/decisions/0305).",
      0,
      { min: 0, max: 1_000 },
    ),
    AUTH_ATTEMPTS_PER_ADDRESS_PER_MINUTE: int(
      "Attempts per client address (CLIENT_IP_HEADER from a trusted proxy, else the peer; IPv6 by /64) and minute on each of /auth/login, /auth/register and /auth/refresh, counted in Redis across edge replicas before any password is hashed; past it 429 (0: no limit).",
      30,
      { min: 0, max: 1_000_000 },
    ),
    AUTH_ATTEMPTS_PER_EMAIL_PER_MINUTE: int("Sign-in attempts per email and minute (known and unknown emails alike); past it 429 (0: no limit).", 10, {
      min: 0,
      max: 1_000_000,
    }),
    AUTH_BACKOFF_AFTER_FAILURES: int(
      "Consecutive failed sign-ins of one email after which each further attempt must wait, doubling with every failure; a success resets it (0: no backoff).",
      5,
      { min: 0, max: 1_000 },
    ),
    AUTH_BACKOFF_BASE_SECONDS: int("The first backoff wait, in seconds (then 2x, 4x, ...).", 1, { min: 1, max: 3_600 }),
    AUTH_BACKOFF_MAX_SECONDS: int("The longest backoff wait, in seconds.", 900, { min: 1, max: 86_400 }),
    BOOTSTRAP_ADMIN_EMAIL: z
      .string()
      .email()
      .optional()
      .describe(
        "With BOOTSTRAP_ADMIN_PASSWORD: the first platform admin, created at start when no account has this email. An existing platform admin is kept as it is; any other existing account is left alone and start-up logs an error (it is never promoted).",
      ),
    BOOTSTRAP_ADMIN_PASSWORD: env.optionalSecret("Password of the bootstrap platform admin (12-256 characters)."),
    ...serviceTokenEnvShape(),
    ...grpcTlsEnvShape(),
    GRPC_DEADLINE_MS: int("Deadline of each unary gRPC call to a service; past it the caller gets 503.", 3_000, { min: 50 }),
    INVOKE_DEADLINE_MS: int("Deadline of a metered AI call (JSON or stream) to the managed-ai service; past it the call is cancelled.", 600_000, {
      min: 1_000,
    }),
    LEDGER_GRPC_URL: address("host:port of the ledger service.", "127.0.0.1:50051"),
    MANAGED_AI_GRPC_URL: address("host:port of the managed-ai service.", "127.0.0.1:50052"),
    JOBS_GRPC_URL: address("host:port of the jobs service.", "127.0.0.1:50053"),
    MESSAGING_GRPC_URL: address("host:port of the messaging service.", "127.0.0.1:50054"),
    FILES_GRPC_URL: address("host:port of the files service.", "127.0.0.1:50055"),
    FILES_TRANSFER_DEADLINE_MS: int("Deadline of one file upload or download through the files service; past it the transfer is cut.", 3_600_000, {
      min: 1_000,
    }),
    PUSH_DEADLINE_MS: int("Deadline of a push send to the messaging service (every target in parallel, each with its own timeout, plus the ledger).", 30_000, {
      min: 1_000,
    }),
    CONSOLE_UI: bool("Serve the web console (apps/console, built) under /app/; it uses only the public API.", true),
    EXPOSE_METRICS: bool("Serve GET /metrics on the public port (turn off when a sidecar scrapes elsewhere).", true),
    KEY_EXPIRY_SCAN_MAX_MS: int(
      "The longest wait between two scans for keys due a `key.expiring` notice (7 and 1 days before expires_at) when none falls due sooner: the bound within which a key made on a replica that is gone is noticed.",
      3_600_000,
      { min: 1_000, max: 86_400_000 },
    ),
    KEY_EXPIRY_CLOCK_OFFSET_MS: int(
      "Moves the key expiry notices' clock by this much (testing only: a stack test drives the notices with it; refused in production).",
      0,
      { min: -31_536_000_000, max: 31_536_000_000 },
    ),
    ...databaseEnvShape("gateway_edge"),
    ...natsEnvShape(),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.JWT_SECRET.length < 32) ctx.addIssue({ code: "custom", path: ["JWT_SECRET"], message: "must be at least 32 characters" });
    if (cfg.NODE_ENV === "production" && cfg.JWT_SECRET === DEV_JWT_SECRET) {
      ctx.addIssue({ code: "custom", path: ["JWT_SECRET"], message: "must be set in production" });
    }
    if (cfg.WIDGET_JWT_SECRET.length < 32) ctx.addIssue({ code: "custom", path: ["WIDGET_JWT_SECRET"], message: "must be at least 32 characters" });
    if (cfg.WIDGET_JWT_SECRET === cfg.JWT_SECRET) ctx.addIssue({ code: "custom", path: ["WIDGET_JWT_SECRET"], message: "must differ from JWT_SECRET" });
    if (cfg.NODE_ENV === "production" && cfg.WIDGET_JWT_SECRET === DEV_WIDGET_JWT_SECRET) {
      ctx.addIssue({ code: "custom", path: ["WIDGET_JWT_SECRET"], message: "must be set in production" });
    }
    if (Boolean(cfg.BOOTSTRAP_ADMIN_EMAIL) !== Boolean(cfg.BOOTSTRAP_ADMIN_PASSWORD)) {
      ctx.addIssue({ code: "custom", path: ["BOOTSTRAP_ADMIN_PASSWORD"], message: "set both BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD, or neither" });
    }
    if (cfg.NODE_ENV === "production" && cfg.KEY_EXPIRY_CLOCK_OFFSET_MS !== 0) {
      ctx.addIssue({ code: "custom", path: ["KEY_EXPIRY_CLOCK_OFFSET_MS"], message: "is for testing and refused in production" });
    }
    if (cfg.AUTH_BACKOFF_MAX_SECONDS < cfg.AUTH_BACKOFF_BASE_SECONDS) {
      ctx.addIssue({ code: "custom", path: ["AUTH_BACKOFF_MAX_SECONDS"], message: "must be at least AUTH_BACKOFF_BASE_SECONDS" });
    }
    const pw = cfg.BOOTSTRAP_ADMIN_PASSWORD;
    if (pw !== undefined && (pw.length < 12 || pw.length > 256)) {
      ctx.addIssue({ code: "custom", path: ["BOOTSTRAP_ADMIN_PASSWORD"], message: "must be 12-256 characters" });
    }
  });
export type EdgeEnv = z.output<typeof EdgeEnv>;

export function loadEnv(source: Record<string, string | undefined>): EdgeEnv {
  return load(EdgeEnv, source);
}
