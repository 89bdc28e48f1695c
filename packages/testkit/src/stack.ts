import { randomBytes } from "node:crypto";
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Redis } from "ioredis";
import { connect, type NatsConnection } from "nats";
import { connectionConfig, databaseUrl, dropDatabase } from "@gateway/db-kit";
import { subjectsFor } from "@gateway/events";
import { checkHealth, type GrpcTls } from "@gateway/grpc-kit";
import { testCerts, type CertName } from "./certs.js";
import { freePort } from "./ports.js";
import { ServiceProcess, type LogLine } from "./process.js";
import { REPO_ROOT } from "./root.js";

export const GRPC_SERVICES = ["ledger", "managed-ai", "jobs", "messaging", "files"] as const;
export type GrpcServiceName = (typeof GRPC_SERVICES)[number];
/** `edge`, `edge-2`, ... are edge replicas sharing every store. */
export type EdgeName = "edge" | `edge-${number}`;
export type ServiceName = EdgeName | GrpcServiceName | `${GrpcServiceName}-${number}`;

const SERVICE_NAMES: Record<GrpcServiceName, string> = {
  ledger: "gateway.ledger.v1.LedgerService",
  "managed-ai": "gateway.managed_ai.v1.ManagedAiService",
  jobs: "gateway.jobs.v1.JobsService",
  messaging: "gateway.messaging.v1.MessagingService",
  files: "gateway.files.v1.FilesService",
};

const EDGE_GRPC_VARS: Record<GrpcServiceName, string> = {
  ledger: "LEDGER_GRPC_URL",
  "managed-ai": "MANAGED_AI_GRPC_URL",
  jobs: "JOBS_GRPC_URL",
  messaging: "MESSAGING_GRPC_URL",
  files: "FILES_GRPC_URL",
};

export { REPO_ROOT };

export type StackOptions = {
  /** Extra environment per service, e.g. `{ edge: { GRPC_DEADLINE_MS: "500" } }`. */
  env?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Start only these gRPC services (the edge always starts). Default: all. */
  services?: GrpcServiceName[];
  /** Server URL for every service's database, default the machine's PostgreSQL. */
  databaseUrl?: string;
  /**
   * Server URL of one service's database instead (replicas follow their service), e.g. a
   * PostgreSQL of its own that a test restarts while the others' keep running.
   */
  databaseUrls?: Partial<Record<GrpcServiceName, string>>;
  /** Redis of the edges, default REDIS_URL or the machine's. */
  redisUrl?: string;
  /** NATS server, default NATS_URL or the machine's. */
  natsUrl?: string;
  readyTimeoutMs?: number;
  /**
   * Run the built services of another checkout (its `apps/<service>/dist/main.js`),
   * e.g. a baseline for before/after benchmarks. Default: this repository.
   */
  appsRoot?: string;
  /**
   * gRPC between the processes over mutual TLS, as in production (docs/decisions/0230):
   * the test kit's CA and a certificate per process. Default true; false: plaintext
   * (e.g. a baseline checkout from before TLS).
   */
  tls?: boolean;
};

export type Stack = {
  runId: string;
  namespace: string;
  edgeUrl: string;
  admin: { email: string; password: string };
  jwtSecret: string;
  /** Every process's SERVICE_TOKEN: a gRPC client of a stack service passes it as `serviceToken`. */
  serviceToken: string;
  /**
   * The certificate a gRPC client of a stack service presents, and the CA it trusts
   * (the edge's; pass as `tls`); undefined when the stack runs in plaintext.
   */
  tls: GrpcTls | undefined;
  /** The edges' WIDGET_JWT_SECRET (chat widget tokens). */
  widgetJwtSecret: string;
  address(service: GrpcServiceName): string;
  metricsUrl(service: ServiceName): string;
  process(service: ServiceName): ServiceProcess;
  logs(service: ServiceName): LogLine[];
  /** Waits for a log line of `service` that matches. */
  waitForLog(service: ServiceName, match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** SQL against a service's own database. */
  sql<T extends pg.QueryResultRow = Record<string, unknown>>(service: ServiceName, text: string, values?: unknown[]): Promise<T[]>;
  nats(): Promise<NatsConnection>;
  stop(service: ServiceName, signal?: NodeJS.Signals): Promise<number | null>;
  /** Starts a stopped service again with the same configuration and waits until it is ready. */
  start(service: ServiceName): Promise<void>;
  /** Starts another edge replica (same database, NATS, Redis and secrets); returns its base URL. */
  addEdge(name: `edge-${number}`, env?: Record<string, string>): Promise<string>;
  /** Starts another replica of a gRPC service (same database and NATS, its own ports); returns its address. */
  addReplica(service: GrpcServiceName, name: `${GrpcServiceName}-${number}`, env?: Record<string, string>): Promise<string>;
  edgeUrlOf(name: EdgeName): string;
  redisPrefix: string;
  shutdown(): Promise<void>;
};

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, proc?: ServiceProcess): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (proc && !proc.running) throw new Error(`${what}: process exited\n${proc.tail()}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`${what}: not ready after ${timeoutMs} ms${proc ? `\n${proc.tail()}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Boots the edge and the gRPC services as real processes against the
 * machine's PostgreSQL and NATS. Each run has its own databases
 * (gw_<run>_<service>) and its own NATS namespace, so runs never collide;
 * `shutdown` drops them again.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const runId = randomBytes(4).toString("hex");
  const namespace = `t${runId}`;
  const serverUrl = options.databaseUrl ?? process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const natsUrl = options.natsUrl ?? process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const redisUrl = options.redisUrl ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  const logDir = process.env.TEST_LOG_DIR ? join(process.env.TEST_LOG_DIR, runId) : undefined;
  const grpcServices = options.services ?? [...GRPC_SERVICES];
  const admin = { email: `admin-${runId}@example.com`, password: `admin-password-${runId}` };
  const jwtSecret = randomBytes(32).toString("hex");
  const widgetJwtSecret = randomBytes(32).toString("hex");
  // A fresh token per run: every service and the edge get it, so calls between them are
  // authenticated exactly as in production (docs/decisions/0183).
  const serviceToken = randomBytes(32).toString("hex");
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  // Every process its own certificate of one CA; clients of the tests use the edge's.
  const certs = options.tls === false ? undefined : testCerts();
  const tls = certs?.tls("edge");
  const tlsEnv = (service: ServiceName): Record<string, string> =>
    certs ? certs.env((service.startsWith("edge") ? "edge" : baseOf(service)) as CertName) : {};

  const ports = new Map<string, number>();
  for (const name of ["edge", ...grpcServices, ...grpcServices.map((s) => `${s}:metrics`)]) ports.set(name, await freePort());
  const replicaOf = new Map<string, GrpcServiceName>();
  const baseOf = (service: ServiceName): string => replicaOf.get(service) ?? service;
  const serverOf = (service: ServiceName) => options.databaseUrls?.[baseOf(service) as GrpcServiceName] ?? serverUrl;
  const dbName = (service: ServiceName) => (service.startsWith("edge") ? `gw_${runId}_edge` : `gw_${runId}_${baseOf(service).replace("-", "_")}`);

  const common = {
    PATH: process.env.PATH ?? "",
    NODE_ENV: "test",
    LOG_LEVEL: "debug",
    // Every line at once (decision 0306): a test that reads the logs, say to find no secret in
    // them, reads all that was logged before it looked.
    LOG_COALESCE_MS: "0",
    DATABASE_URL: serverUrl,
    NATS_URL: natsUrl,
    NATS_NAMESPACE: namespace,
    SHUTDOWN_TIMEOUT_MS: "5000",
    OUTBOX_POLL_MS: "100",
    SERVICE_TOKEN: serviceToken,
  };
  const processes = new Map<ServiceName, ServiceProcess>();
  const entry = (service: ServiceName) => {
    const path = join(options.appsRoot ?? REPO_ROOT, "apps", service.startsWith("edge") ? "edge" : baseOf(service), "dist", "main.js");
    if (!existsSync(path)) throw new Error(`${path} is missing: build first (pnpm build)`);
    return path;
  };

  // Services that call other services get their addresses.
  const peers: Partial<Record<GrpcServiceName, Record<string, string>>> = {
    "managed-ai": { LEDGER_GRPC_URL: `127.0.0.1:${ports.get("ledger") ?? 9}` },
    // Each run stores file bytes in its own directory, removed by shutdown.
    files: { FILES_LOCAL_DIR: join(tmpdir(), `gw-${runId}-files`) },
    messaging: { LEDGER_GRPC_URL: `127.0.0.1:${ports.get("ledger") ?? 9}`, MANAGED_AI_GRPC_URL: `127.0.0.1:${ports.get("managed-ai") ?? 9}` },
    jobs: { LEDGER_GRPC_URL: `127.0.0.1:${ports.get("ledger") ?? 9}`, MANAGED_AI_GRPC_URL: `127.0.0.1:${ports.get("managed-ai") ?? 9}` },
  };
  for (const service of grpcServices) {
    processes.set(
      service,
      new ServiceProcess(
        service,
        entry(service),
        {
          ...common,
          ...tlsEnv(service),
          DATABASE_URL: serverOf(service),
          DATABASE_NAME: dbName(service),
          GRPC_PORT: String(ports.get(service)),
          METRICS_PORT: String(ports.get(`${service}:metrics`)),
          ...peers[service],
          ...options.env?.[service],
        },
        logDir,
      ),
    );
  }
  const grpcUrls = Object.fromEntries(GRPC_SERVICES.map((s) => [EDGE_GRPC_VARS[s], `127.0.0.1:${ports.get(s) ?? 9}`]));
  const edgeEnv = (name: EdgeName, port: number, extra?: Record<string, string>) => ({
    ...common,
    ...tlsEnv(name),
    DATABASE_NAME: dbName(name),
    PORT: String(port),
    JWT_SECRET: jwtSecret,
    WIDGET_JWT_SECRET: widgetJwtSecret,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: namespace,
    BOOTSTRAP_ADMIN_EMAIL: admin.email,
    BOOTSTRAP_ADMIN_PASSWORD: admin.password,
    // Every test client is 127.0.0.1 and signs in often: the sign-in limits are far
    // out of the way; the tests of those limits set their own (tests/src/auth-limits.test.ts).
    AUTH_ATTEMPTS_PER_ADDRESS_PER_MINUTE: "1000000",
    AUTH_ATTEMPTS_PER_EMAIL_PER_MINUTE: "1000000",
    ...grpcUrls,
    ...options.env?.edge,
    ...extra,
  });
  processes.set("edge", new ServiceProcess("edge", entry("edge"), edgeEnv("edge", ports.get("edge")!), logDir));

  const edgeUrl = `http://127.0.0.1:${ports.get("edge")}`;
  const edgeUrlOf = (name: EdgeName) => `http://127.0.0.1:${ports.get(name)}`;
  const ready = async (service: ServiceName) => {
    const proc = processes.get(service)!;
    if (service.startsWith("edge")) {
      const url = edgeUrlOf(service as EdgeName);
      await waitUntil(service, async () => (await fetch(`${url}/health`)).status === 200, readyTimeoutMs, proc);
    } else {
      const address = `127.0.0.1:${ports.get(service)}`;
      const name = SERVICE_NAMES[baseOf(service) as GrpcServiceName];
      await waitUntil(service, async () => (await checkHealth(address, name, 500, tls)) === "SERVING", readyTimeoutMs, proc);
    }
  };

  const pools = new Map<ServiceName, pg.Pool>();
  let nc: NatsConnection | undefined;

  const stack: Stack = {
    runId,
    namespace,
    edgeUrl,
    admin,
    jwtSecret,
    serviceToken,
    tls,
    widgetJwtSecret,
    redisPrefix: namespace,
    edgeUrlOf,
    address: (service) => `127.0.0.1:${ports.get(service)}`,
    metricsUrl: (service) =>
      service.startsWith("edge") ? `${edgeUrlOf(service as EdgeName)}/metrics` : `http://127.0.0.1:${ports.get(`${service}:metrics`)}/metrics`,
    async addReplica(service, name, env) {
      if (processes.has(name)) throw new Error(`${name} exists`);
      const first = processes.get(service);
      if (!first) throw new Error(`${service} is not part of this stack`);
      replicaOf.set(name, service);
      ports.set(name, await freePort());
      ports.set(`${name}:metrics`, await freePort());
      const proc = new ServiceProcess(
        name,
        entry(name),
        { ...first.env, GRPC_PORT: String(ports.get(name)), METRICS_PORT: String(ports.get(`${name}:metrics`)), ...env },
        logDir,
      );
      processes.set(name, proc);
      proc.start();
      await ready(name);
      return `127.0.0.1:${ports.get(name)}`;
    },
    process: (service) => processes.get(service)!,
    logs: (service) => processes.get(service)!.lines,
    async waitForLog(service, match, timeoutMs = 10_000) {
      const proc = processes.get(service)!;
      let found: LogLine | undefined;
      await waitUntil(
        `log line of ${service}`,
        async () => {
          found = proc.lines.find(match);
          return found !== undefined;
        },
        timeoutMs,
      );
      return found!;
    },
    async sql(service, text, values = []) {
      let pool = pools.get(service);
      if (!pool) {
        pool = new pg.Pool({ ...connectionConfig(databaseUrl(serverOf(service), dbName(service))), max: 2 });
        // A server restart (the fault suite's) cuts idle connections: an error event, not a crash.
        pool.on("error", () => undefined);
        pools.set(service, pool);
      }
      return (await pool.query(text, values)).rows;
    },
    async nats() {
      nc ??= await connect({ servers: natsUrl, name: `testkit-${runId}` });
      return nc;
    },
    stop: (service, signal) => processes.get(service)!.stop(signal),
    async start(service) {
      processes.get(service)!.start();
      await ready(service);
    },
    async addEdge(name, env) {
      if (processes.has(name)) throw new Error(`${name} exists`);
      ports.set(name, await freePort());
      const proc = new ServiceProcess(name, entry(name), edgeEnv(name, ports.get(name)!, env), logDir);
      processes.set(name, proc);
      proc.start();
      await ready(name);
      return edgeUrlOf(name);
    },
    async shutdown() {
      await Promise.all([...processes.values()].map((p) => p.stop()));
      for (const p of processes.values()) p.close();
      await Promise.all([...pools.values()].map((p) => p.end()));
      const conn = await stack.nats();
      const jsm = await conn.jetstreamManager();
      await jsm.streams.delete(subjectsFor(namespace).stream).catch(() => undefined);
      await conn.drain();
      const databases = new Map([...processes.keys()].map((s) => [dbName(s), serverOf(s)]));
      for (const [name, server] of databases) await dropDatabase(server, name);
      rmSync(join(tmpdir(), `gw-${runId}-files`), { recursive: true, force: true });
      const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      try {
        await redis.connect();
        let cursor = "0";
        do {
          const [next, found] = await redis.scan(cursor, "MATCH", `${namespace}:*`, "COUNT", 500);
          cursor = next;
          if (found.length > 0) await redis.del(...found);
        } while (cursor !== "0");
      } finally {
        redis.disconnect();
      }
    },
  };

  try {
    for (const proc of processes.values()) proc.start();
    await Promise.all([...processes.keys()].map(ready));
  } catch (err) {
    await stack.shutdown().catch(() => undefined);
    throw err;
  }
  return stack;
}
