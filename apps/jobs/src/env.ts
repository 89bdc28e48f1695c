import { z } from "zod";
import { address, bool, env, int, loadEnv as load, oneOf, serviceEnvShape, url } from "@gateway/config";
import { DEV_ENCRYPTION_KEYS, keyringProblem } from "@gateway/secrets";

export const JobsEnv = z
  .object({
    ...serviceEnvShape({ service: "jobs", grpcPort: 50053, metricsPort: 9103 }),
    ENCRYPTION_KEYS: env.secret(
      "Keys that encrypt callback secrets at rest: comma-separated `<key id>:<base64 of 32 bytes>`, the first encrypts (as managed-ai's, docs/decisions/0015). Required in production.",
      DEV_ENCRYPTION_KEYS,
    ),
    LEDGER_GRPC_URL: address("host:port of the ledger service (holds for live energy leases).", "127.0.0.1:50051"),
    MANAGED_AI_GRPC_URL: address(
      "host:port of the managed-ai service (a lease's hold the ledger refused is asked again after the tenant's allotments give back what no call claimed).",
      "127.0.0.1:50052",
    ),
    LEDGER_DEADLINE_MS: int("Deadline of each ledger call.", 3_000, { min: 50 }),
    TRON_MODE: oneOf(
      "`sandbox`: leases are dry runs (no charge, no provider order, no callbacks); `live`: reserve, order, verify on chain, capture.",
      ["sandbox", "live"] as const,
      "sandbox",
    ),
    TRON_PROVIDER: oneOf(
      "Which energy rental API `TRON_PROVIDER_URL` speaks (live mode): `generic` (`POST {url}/orders`, docs/decisions/0102) or `itrx` (itrx.io / TronEnergy, `https://itrx.io`, docs/decisions/0105).",
      ["generic", "itrx"] as const,
      "generic",
    ),
    TRON_PROVIDER_URL: url(
      "Base URL of the energy rental provider (live mode): for `generic` `POST {url}/orders`; for `itrx` its API root, e.g. `https://itrx.io`.",
      "http://127.0.0.1:8091",
      ["http:", "https:"],
    ),
    TRON_PROVIDER_API_KEY: env.optionalSecret(
      "The provider's API key: `generic` sends it as a Bearer token when set; `itrx` sends it as `API-KEY` (required with `TRON_PROVIDER=itrx` in live mode).",
    ),
    TRON_PROVIDER_API_SECRET: env.optionalSecret(
      "`itrx` only: the API secret paired with the key, which signs orders (HMAC-SHA256); required with `TRON_PROVIDER=itrx` in live mode.",
    ),
    TRON_PROVIDER_MINIMUM_TTL_SECONDS: int(
      "`itrx` only: how long the provider's reported minimum order (`minimum_order_energy` of `GET /api/v1/frontend/index-data`) is kept; quotes below it are refused in live mode (docs/decisions/0245).",
      600,
      { min: 1, max: 86_400 },
    ),
    TRON_NODE_URL: url(
      "Base URL of the TRON node HTTP API (live mode): `wallet/gettransactionbyid` reads a reported delegation transaction, `wallet/getaccountresource` the energy ratio; the confirmation is read from the solidity API (`TRON_SOLIDITY_URL`).",
      "http://127.0.0.1:8090",
      ["http:", "https:"],
    ),
    TRON_SOLIDITY_URL: z
      .string()
      .url()
      .refine((v) => ["http:", "https:"].includes(new URL(v).protocol), "must be a URL with protocol http: or https:")
      .optional()
      .describe(
        "Base URL of the node's solidity HTTP API (`walletsolidity/`, irreversible blocks: java-tron serves it on its own port, 8091 by default); unset: `TRON_NODE_URL` (TronGrid serves both). A lease is captured only once its delegation is in an irreversible block (`walletsolidity/gettransactioninfobyid`, `walletsolidity/getdelegatedresourcev2`).",
      ),
    TRON_HTTP_TIMEOUT_MS: int("Timeout of each call to the provider or the node.", 10_000, { min: 100 }),
    TRON_VERIFY_TIMEOUT_SECONDS: int("A live lease whose delegation the node has not shown this long after the order ends `expired`, refunded.", 600, {
      min: 1,
    }),
    TRON_DELIVERY_TOLERANCE_BPS: int(
      "How far below the ordered energy the delivered energy may be and still verify a lease, in basis points (100 = 1 %): the energy per staked TRX drifts between the delegation and the check (docs/decisions/0245).",
      100,
      { min: 0, max: 1_000 },
    ),
    TRON_VERIFY_POLL_MS: int("How often the node is asked for the delegation while a lease waits for it.", 3_000, { min: 10 }),
    TRON_QUOTE_TTL_SECONDS: int("How long a quote can be used to create a lease.", 300, { min: 1, max: 86_400 }),
    TRON_PRICE_BASE_UNITS: int("Quote price, fixed part per lease, in units of USD 0.0001 (docs/decisions/0101).", 100, { min: 0 }),
    TRON_PRICE_UNITS_PER_MEGA_ENERGY_HOUR: int(
      "Quote price, variable part: units per 1,000,000 energy per hour, prorated by the second and rounded up (docs/decisions/0101).",
      40_000,
      { min: 0 },
    ),
    JOBS_RUNNER_CONCURRENCY: int("How many job steps one replica runs at once (JetStream messages in flight).", 16, { min: 1, max: 256 }),
    JOBS_ACK_WAIT_MS: int(
      "How long JetStream waits for a job step's answer before giving its message to another replica (a crashed replica's steps resume after this).",
      30_000,
      { min: 1_000 },
    ),
    CALLBACK_BASE_DELAY_MS: int("First retry delay of a failed callback; doubles per attempt, with jitter (at most 8 attempts).", 1_000, { min: 1 }),
    CALLBACK_TIMEOUT_MS: int("How long a callback receiver may take to answer (2xx within it = delivered).", 10_000, { min: 100 }),
    CALLBACK_POLL_MS: int("How often the callback dispatcher looks for due deliveries it was not told about (other replicas, restarts).", 500, { min: 10 }),
    CALLBACK_ALLOW_HTTP_LOOPBACK: bool("Allow `http://` callback URLs on loopback addresses (local testing only); otherwise HTTPS only.", false),
  })
  .superRefine((cfg, ctx) => {
    const problem = keyringProblem(cfg.ENCRYPTION_KEYS, cfg.NODE_ENV === "production");
    if (problem) ctx.addIssue({ code: "custom", path: ["ENCRYPTION_KEYS"], message: problem });
    if (cfg.TRON_MODE === "live" && cfg.TRON_PROVIDER === "itrx") {
      for (const name of ["TRON_PROVIDER_API_KEY", "TRON_PROVIDER_API_SECRET"] as const) {
        if (!cfg[name]) ctx.addIssue({ code: "custom", path: [name], message: "is required with TRON_PROVIDER=itrx in live mode" });
      }
    }
    if (cfg.NODE_ENV === "production" && cfg.CALLBACK_ALLOW_HTTP_LOOPBACK) {
      ctx.addIssue({ code: "custom", path: ["CALLBACK_ALLOW_HTTP_LOOPBACK"], message: "is for local testing and refused in production" });
    }
  });
export type JobsEnv = z.output<typeof JobsEnv>;

export function loadEnv(source: Record<string, string | undefined>): JobsEnv {
  return load(JobsEnv, source);
}
