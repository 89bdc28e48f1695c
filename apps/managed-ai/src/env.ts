import { z } from "zod";
import { address, bool, env, int, loadEnv as load, serviceEnvShape } from "@gateway/config";
import { DEV_ENCRYPTION_KEYS, keyringProblem } from "@gateway/secrets";

export const ManagedAiEnv = z
  .object({
    ...serviceEnvShape({ service: "managed-ai", grpcPort: 50052, metricsPort: 9102 }),
    ENCRYPTION_KEYS: env.secret(
      "Keys that encrypt provider credentials at rest: comma-separated `<key id>:<base64 of 32 bytes>`. The first encrypts; the others only decrypt (key rotation, docs/decisions/0015). Required in production.",
      DEV_ENCRYPTION_KEYS,
    ),
    LEDGER_GRPC_URL: address("host:port of the ledger service (holds for metered requests).", "127.0.0.1:50051"),
    LEDGER_DEADLINE_MS: int("Deadline of each ledger call; past it the request is answered 503 and its record kept for review.", 3_000, { min: 50 }),
    HOLD_TTL_SECONDS: int("A metered request's hold expires this long after its reservation; an operator may then release it.", 900, { min: 1 }),
    PROVIDER_TIMEOUT_MS: int("How long a provider may take to start answering a chat completion (status and headers).", 120_000, { min: 100 }),
    PROVIDER_IDLE_TIMEOUT_MS: int("How long a provider's answer may stall between two pieces (a stalled stream ends as interrupted).", 60_000, { min: 100 }),
    METRICS_TENANT_LABEL: bool(
      "The spend and token counters (`gateway_ai_spend_units_total`, `gateway_ai_tokens_total`) carry a `tenant` label; false: per model only (large fleets; docs/decisions/0211).",
      true,
    ),
    ALLOW_PRIVATE_TARGETS: bool(
      "Let bring-your-own-key base URLs reach loopback, private and link-local addresses (local testing only, refused in production; customer URLs are otherwise refused at write and at connect).",
      false,
    ),
    CATALOG_CACHE_TTL_MS: int(
      "How long a replica keeps instances, models, prices and offers in memory for invocations; any write empties the cache at once here and, by broadcast, on other replicas.",
      5_000,
      { min: 0, max: 300_000 },
    ),
    UPSTREAM_TEST_TIMEOUT_MS: int(
      "How long an upstream connection test waits for the provider's answer before reporting it unreachable (never longer than the caller's gRPC deadline allows).",
      2_500,
      { min: 100, max: 60_000 },
    ),
    RECONCILE_INTERVAL_MS: int(
      "How often the reconciler finishes usage records whose outcome was unknown (ledger down, a crash) from what the ledger knows; 0 turns it off. It also runs at start.",
      30_000,
      { min: 0 },
    ),
    RECONCILE_IDLE_MAX_MS: int(
      "While reconciler passes find nothing to do or to wait for and this replica serves no call, the wait between them doubles from RECONCILE_INTERVAL_MS up to this. It bounds how much later than usual the orphans of another replica that died are found.",
      300_000,
      { min: 0 },
    ),
    RECONCILE_RESERVED_AFTER_SECONDS: int(
      "A usage record still `reserved` after this long belongs to a process that is gone: the reconciler settles it from the ledger (longer than any request may last).",
      900,
      { min: 1 },
    ),
    RECONCILE_SETTLED_AFTER_SECONDS: int(
      "A completed usage record settled this long ago has its capture checked in the ledger, and replayed if a crash lost it (longer than a capture sent with the record can take).",
      60,
      { min: 1 },
    ),
    ALLOTMENTS: bool(
      "Metered requests claim their reservations from an allotment (funds the ledger sets aside per tenant) instead of each taking a hold in the ledger; charges are posted in batches (docs/decisions/0028). Off: a hold per request.",
      true,
    ),
    ALLOTMENT_SHARE_PERCENT: int("An allotment takes this share of the tenant's available balance.", 25, { min: 1, max: 100 }),
    ALLOTMENT_MAX_UNITS: int("The largest allotment, in units.", 1_000_000, { min: 1 }),
    ALLOTMENT_MIN_UNITS: int(
      "No allotment below this many units (nor below four times the request's reservation): such tenants keep a hold per request.",
      1_000,
      { min: 1 },
    ),
    ALLOTMENT_POST_LINGER_MS: int(
      "How long a charge from an allotment waits for others before its batch is posted to the ledger (the balance views show it within this).",
      100,
      {
        min: 0,
        max: 900,
      },
    ),
    RECORD_COMMIT_CONCURRENCY: int(
      "How many group-committed statements of usage records (opens, and apart from them settlements) may be in flight at once; records that arrive meanwhile wait and go together in the next statement.",
      1,
      { min: 1, max: 8 },
    ),
    ALLOTMENT_IDLE_SECONDS: int("An allotment without a new claim for this long is closed by the reconciler (its rest goes back to available).", 30, {
      min: 1,
    }),
    ALLOTMENT_MAX_AGE_SECONDS: int("An allotment older than this is closed by the reconciler; the tenant's next request opens a new one.", 600, { min: 1 }),
    USAGE_RETENTION_DAYS: int(
      "Usage records older than this many days leave the database, whole UTC months at a time, once written to USAGE_EXPORT_DIR (docs/decisions/0241); 0 keeps every record. The ledger's journal keeps every entry whatever this says.",
      0,
      { min: 0 },
    ),
    USAGE_EXPORT_DIR: z
      .string()
      .default("")
      .describe(
        "Where usage retention writes each month's records before they leave: `<dir>/<YYYY-MM>/<tenant>.ndjson`, one JSON object a line. Required when USAGE_RETENTION_DAYS is set.",
      ),
  })
  .superRefine((cfg, ctx) => {
    const problem = keyringProblem(cfg.ENCRYPTION_KEYS, cfg.NODE_ENV === "production");
    if (problem) ctx.addIssue({ code: "custom", path: ["ENCRYPTION_KEYS"], message: problem });
    if (cfg.USAGE_RETENTION_DAYS > 0 && !cfg.USAGE_EXPORT_DIR) {
      ctx.addIssue({ code: "custom", path: ["USAGE_EXPORT_DIR"], message: "usage retention writes every record out before it leaves: set USAGE_EXPORT_DIR" });
    }
    if (cfg.NODE_ENV === "production" && cfg.ALLOW_PRIVATE_TARGETS) {
      ctx.addIssue({
        code: "custom",
        path: ["ALLOW_PRIVATE_TARGETS"],
        message: "turns off every check of customer URLs (SSRF) and is for local testing: refused in production",
      });
    }
  });
export type ManagedAiEnv = z.output<typeof ManagedAiEnv>;

export function loadEnv(source: Record<string, string | undefined>): ManagedAiEnv {
  return load(ManagedAiEnv, source);
}
