import { createClient } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { call, newTenant, signIn, startStack, type Stack } from "@gateway/testkit";
import { pidsOf, type ProcessGroup } from "./cpu.js";
import { childrenOf, reapedCpu, type OwnServers } from "./servers.js";

export type Gateway = {
  stack: Stack;
  url: string;
  key: string;
  tenant: { tenantId: string; token: string };
  /**
   * The tenant's usage records after `sinceSeq` (completed, the sum of their final units,
   * any other), the highest seq, its balance and the ledger's answered calls. Reads only
   * the records after `sinceSeq` (index on tenant and seq) and the balance (the account row
   * and the open allotments), so a reading costs the same however much the tenant and the
   * journal hold.
   */
  ledgerState(sinceSeq: bigint): Promise<{
    lastSeq: bigint;
    completed: number;
    finalUnits: bigint;
    otherRecords: number;
    available: bigint;
    reserved: bigint;
    ledgerCalls: number;
  }>;
  /** The ledger's invariant for the tenant (it sums the whole journal: call it once a run, outside any timing). */
  invariantOk(): Promise<boolean>;
  groups(): ProcessGroup[];
  /** Which PostgreSQL backend serves which service's database, for the CPU groups; call before sampling. */
  snapshotBackends(): Promise<void>;
  /**
   * After the last request: waits (at most `timeoutMs`) until the reconciler has closed
   * every allotment of the tenant (they close once idle, decision 0028), then compares
   * the journal with the usage records.
   */
  closeout(timeoutMs: number): Promise<Closeout>;
  /** The names of the stack's six databases. */
  databases(): Promise<string[]>;
  stop(): Promise<void>;
};

/** The tenant's money once its allotments are closed: the ledger's journal against the usage records. */
export type Closeout = {
  waitedSeconds: number;
  allotments: { opened: number; closed: number; notClosed: number };
  records: { completed: number; charged: bigint; fromAllotments: number };
  journal: { posts: number; postedUnits: bigint; capturedUnits: bigint; balanceDrop: bigint; reserved: bigint };
  invariantOk: boolean;
};

/** Whole-run figures agree: every allotment closed, one post per allotment-charged record, journal charges = record charges = balance drop. */
export function closeoutOk(c: Closeout): boolean {
  const charged = c.journal.postedUnits + c.journal.capturedUnits;
  return (
    c.allotments.notClosed === 0 &&
    c.journal.posts === c.records.fromAllotments &&
    charged === c.records.charged &&
    c.journal.balanceDrop === c.records.charged &&
    c.journal.reserved === 0n &&
    c.invariantOk
  );
}

/** The stack's six services. */
export const PROCS = ["edge", "managed-ai", "ledger", "jobs", "messaging", "files"] as const;

function must<T>(res: { status: number; body: T }, status: number, what: string): T {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/**
 * The whole stack as in production (every service a process, PostgreSQL, NATS,
 * Redis), logs at warn, with one managed model behind the mock provider and a
 * tenant whose API key has a full policy (scope, alias, daily quota, per-minute
 * rate, concurrency), so every check runs on every request.
 */
export async function startGateway(
  mockUrl: string,
  mockKey: string,
  extraEnv: Record<string, string> = {},
  /** Environment of one service on top of the rest (the soak's messaging and jobs). */
  perService: Partial<Record<(typeof PROCS)[number], Record<string, string>>> = {},
  /**
   * The benchmark's own servers (startOwnServers; DATABASE_URL, NATS_URL and REDIS_URL must
   * point at them): the CPU groups then count their processes only, with the cluster's
   * ended workers (autovacuum), instead of every postgres, nats-server and redis-server on
   * the machine.
   */
  servers?: OwnServers,
): Promise<Gateway> {
  // BENCH_ENV: extra environment for every service, as JSON (tuning experiments).
  const fromEnv = JSON.parse(process.env.BENCH_ENV ?? "{}") as Record<string, string>;
  // Production mode refuses the development sealing key wherever secrets are sealed.
  const keys = { ENCRYPTION_KEYS: `bench:${Buffer.alloc(32, 7).toString("base64")}` };
  const quiet = {
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "warn",
    LOG_COALESCE_MS: "100",
    NODE_ENV: "production",
    OUTBOX_POLL_MS: "500",
    ...fromEnv,
    ...extraEnv,
  };
  const stack = await startStack({
    // BENCH_APPS_ROOT: measure another checkout's build (scripts/bench-steps.sh).
    ...(process.env.BENCH_APPS_ROOT ? { appsRoot: process.env.BENCH_APPS_ROOT } : {}),
    // BENCH_GRPC_TLS=0: plaintext gRPC, for a baseline checkout from before mutual TLS (docs/decisions/0230).
    ...(process.env.BENCH_GRPC_TLS === "0" ? { tls: false } : {}),
    env: {
      edge: { ...quiet, JWT_SECRET: "bench-jwt-secret-0123456789-0123456789", ...perService.edge },
      ledger: { ...quiet, ...perService.ledger },
      "managed-ai": { ...keys, ...quiet, ...perService["managed-ai"] },
      jobs: { ...keys, ...quiet, ...perService.jobs },
      messaging: { ...keys, ...quiet, ...perService.messaging },
      files: { ...quiet, ...perService.files },
    },
  });
  const admin = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
  const op = (method: string, path: string, body: unknown) => call(stack.edgeUrl, method, path, { token: admin, body });
  must(await op("PUT", "/ops/ai/upstreams/mock", { provider: "openai", base_url: mockUrl, api_key: mockKey }), 200, "upstream");
  must(await op("PUT", "/ops/ai/models/bench-small", { upstream_id: "mock", upstream_model: "mock-small" }), 200, "model");
  must(await op("POST", "/ops/ai/models/bench-small/prices", { input_units_per_mtok: 1_500_000, output_units_per_mtok: 6_000_000 }), 201, "price");
  const tenant = await newTenant(stack.edgeUrl, "bench");
  const credited = 1_000_000_000_000n;
  must(await op("POST", `/ops/ledger/tenants/${tenant.tenantId}/credits`, { units: Number(credited), reason: "benchmark" }), 201, "credit");
  must(
    await call(stack.edgeUrl, "POST", "/console/services", {
      token: tenant.token,
      body: { service_id: "ai-model", alias: "bench", status: "active", config: { mode: "managed", default_model: "bench-small" } },
    }),
    201,
    "instance",
  );
  const key = must(
    await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: tenant.token,
      body: {
        name: "bench",
        scopes: ["ai:invoke"],
        service_aliases: ["ai-model:bench"],
        daily_quota: 1_000_000_000,
        rate_limit_per_minute: 1_000_000,
        concurrency_limit: 10_000,
      },
    }),
    201,
    "key",
  ).data.key;
  const ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 10_000, serviceToken: stack.serviceToken, tls: stack.tls });
  // Every process of the stack: the six services, then PostgreSQL, NATS and Redis below.
  const procs = PROCS;
  const databases = ["ledger", "managed-ai", "jobs", "messaging", "files", "edge"] as const;
  let names: Map<string, string> | undefined;
  /** Database name → service, asked once. */
  const databaseNames = async () =>
    (names ??= new Map(
      await Promise.all(databases.map(async (s) => [(await stack.sql<{ db: string }>(s, "SELECT current_database() AS db"))[0]!.db, s] as const)),
    ));
  let backends: { pid: number; database: string | null; service: string | undefined }[] = [];
  return {
    stack,
    url: stack.edgeUrl,
    key,
    tenant,
    async ledgerState(sinceSeq) {
      const rows = await stack.sql<{ status: string; n: number; units: string | null; last: string }>(
        "managed-ai",
        `SELECT status, count(*)::int AS n, sum(final_units)::text AS units, max(seq)::text AS last
         FROM usage_records WHERE tenant_id = $1 AND seq > $2 GROUP BY status`,
        [tenant.tenantId, sinceSeq.toString()],
      );
      const completed = rows.find((r) => r.status === "completed");
      const lastSeq = rows.reduce((max, r) => (BigInt(r.last) > max ? BigInt(r.last) : max), sinceSeq);
      // Calls the ledger has answered so far (its gRPC server histogram), read before the
      // balance and invariant calls below so they are not counted in a run.
      const metrics = await (await fetch(stack.metricsUrl("ledger"))).text();
      const ledgerCalls = metrics
        .split("\n")
        .filter((l) => l.startsWith("grpc_server_handling_seconds_count"))
        .reduce((n, l) => n + Number(l.split(" ").pop()), 0);
      const balance = await ledger.GetBalance({ tenant_id: tenant.tenantId });
      return {
        lastSeq,
        completed: completed?.n ?? 0,
        finalUnits: BigInt(completed?.units ?? "0"),
        otherRecords: rows.filter((r) => r.status !== "completed").reduce((n, r) => n + r.n, 0),
        available: BigInt(balance.available_units),
        reserved: BigInt(balance.reserved_units),
        ledgerCalls,
      };
    },
    async invariantOk() {
      return (await ledger.CheckInvariant({ tenant_id: tenant.tenantId })).ok;
    },
    groups() {
      return [
        ...procs.map((name) => ({ name, pids: () => [stack.process(name).pid ?? 0].filter(Boolean) })),
        // PostgreSQL's backends by the service whose database they serve (from the last
        // snapshotBackends), then its own processes (postmaster, WAL writer, checkpointer,
        // ...); backends of other databases (another stack on the machine) are left out.
        ...databases.map((service) => ({
          name: `postgres (${service})`,
          pids: () => backends.filter((b) => b.service === service).map((b) => b.pid),
        })),
        servers
          ? {
              name: "postgres (own processes)",
              pids: () => [servers.postmaster, ...childrenOf(servers.postmaster)].filter((pid) => !backends.some((b) => b.pid === pid && b.database)),
              reaped: () => reapedCpu(servers.postmaster),
            }
          : { name: "postgres (own processes)", pids: () => pidsOf("postgres", true).filter((pid) => !backends.some((b) => b.pid === pid && b.database)) },
        { name: "nats", pids: () => (servers ? [servers.nats] : pidsOf("nats-server")) },
        { name: "redis", pids: () => (servers ? [servers.redis] : pidsOf("redis-server")) },
      ];
    },
    databases: async () => [...(await databaseNames()).keys()],
    async snapshotBackends() {
      const names = await databaseNames();
      // Not the connection that asks (the benchmark's own).
      const rows = await stack.sql<{ pid: number; datname: string | null }>(
        "ledger",
        "SELECT pid, datname FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
      );
      backends = rows.map((r) => ({ pid: r.pid, database: r.datname, service: r.datname ? names.get(r.datname) : undefined }));
    },
    async closeout(timeoutMs) {
      const started = Date.now();
      type States = { state: string; n: number };
      const states = () =>
        stack.sql<States>("managed-ai", "SELECT state, count(*)::int AS n FROM allotments WHERE tenant_id = $1 GROUP BY state", [tenant.tenantId]);
      let rows = await states();
      while (rows.some((r) => r.state !== "closed") && Date.now() - started < timeoutMs) {
        await new Promise((r) => setTimeout(r, 1_000));
        rows = await states();
      }
      const [records] = await stack.sql<{ completed: number; charged: string | null; from_allotments: number }>(
        "managed-ai",
        `SELECT count(*)::int AS completed, sum(final_units)::text AS charged, count(allotment_id)::int AS from_allotments
         FROM usage_records WHERE tenant_id = $1 AND status = 'completed'`,
        [tenant.tenantId],
      );
      const [journal] = await stack.sql<{ posts: number; posted: string | null; captured: string | null }>(
        "ledger",
        `SELECT count(*) FILTER (WHERE kind = 'post')::int AS posts, sum(units) FILTER (WHERE kind = 'post')::text AS posted,
                sum(units) FILTER (WHERE kind = 'capture')::text AS captured
         FROM transfers WHERE tenant_id = $1`,
        [tenant.tenantId],
      );
      const balance = await ledger.GetBalance({ tenant_id: tenant.tenantId });
      const check = await ledger.CheckInvariant({ tenant_id: tenant.tenantId });
      const count = (state: string) => rows.find((r) => r.state === state)?.n ?? 0;
      return {
        waitedSeconds: Math.round((Date.now() - started) / 1000),
        allotments: { opened: rows.reduce((n, r) => n + r.n, 0), closed: count("closed"), notClosed: rows.reduce((n, r) => n + r.n, 0) - count("closed") },
        records: { completed: records?.completed ?? 0, charged: BigInt(records?.charged ?? "0"), fromAllotments: records?.from_allotments ?? 0 },
        journal: {
          posts: journal?.posts ?? 0,
          postedUnits: BigInt(journal?.posted ?? "0"),
          capturedUnits: BigInt(journal?.captured ?? "0"),
          balanceDrop: credited - BigInt(balance.available_units) - BigInt(balance.reserved_units),
          reserved: BigInt(balance.reserved_units),
        },
        invariantOk: check.ok,
      };
    },
    async stop() {
      ledger.close();
      await stack.shutdown();
    },
  };
}
