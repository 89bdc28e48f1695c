import { startMetricsServer, createRegistry, type Probes, type Registry } from "@gateway/metrics";
import { createPool, prepareDatabase, ping } from "@gateway/db-kit";
import { subjectsFor, type EventType, type Subjects } from "@gateway/events";
import {
  connectNats,
  createTransact,
  ensureStream,
  JetStreamPublisher,
  pgTransactions,
  outboxTable,
  Relay,
  startCheckpointConsumer,
  startConsumer,
  type EventHandler,
  type JetStreamClient,
  type JetStreamManager,
  type NatsConnection,
  type RunningConsumer,
  type SqlExecutor,
  type Transact,
  type TxRunner,
} from "@gateway/events-runtime";
import { GrpcServer, readTls } from "@gateway/grpc-kit";
import type pg from "pg";
import { createLogger, type Logger } from "@gateway/logger";
import { startTelemetry, type OtlpProtocol } from "@gateway/telemetry";
import { Shutdown } from "./shutdown.js";

/** The variables every service reads (see `serviceEnvShape` in @gateway/config). */
export type CommonEnv = {
  LOG_LEVEL: string;
  LOG_COALESCE_MS: number;
  SHUTDOWN_TIMEOUT_MS: number;
  /** Tracing is on when set (see `telemetryEnvShape` in @gateway/config). */
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_PROTOCOL: OtlpProtocol;
  OTEL_SERVICE_NAME?: string | undefined;
  OTEL_BSP_SCHEDULE_DELAY: number;
  /** Separate /metrics port; absent or 0 when the process serves /metrics itself (the edge). */
  METRICS_PORT?: number;
  DATABASE_URL: string;
  DATABASE_NAME: string;
  DATABASE_POOL_SIZE: number;
  MIGRATE_ON_START: boolean;
  OUTBOX_POLL_MS: number;
  OUTBOX_POLL_MAX_MS: number;
  OUTBOX_LINGER_MS: number;
  OUTBOX_LINGER_MAX_MS: number;
  CONSUMER_LINGER_MS: number;
  NATS_URL: string;
  NATS_NAMESPACE: string;
};

/**
 * `SERVICE_TOKEN`: the shared token every call to this server must carry (docs/decisions/0183);
 * `GRPC_TLS_*`: the CA, certificate and key of mutual TLS, or none (plaintext, local runs only;
 * docs/decisions/0230); `GRPC_HEALTH_PORT`: a plaintext port of the health service alone, or 0.
 */
export type GrpcEnv = CommonEnv & {
  GRPC_HOST: string;
  GRPC_PORT: number;
  GRPC_HEALTH_PORT?: number | undefined;
  SERVICE_TOKEN: string;
  GRPC_TLS_CA?: string | undefined;
  GRPC_TLS_CERT?: string | undefined;
  GRPC_TLS_KEY?: string | undefined;
};

/** What a Prisma client offers that the runtime needs. */
export type PrismaLike<Tx extends SqlExecutor> = SqlExecutor & {
  $transaction<R>(fn: (tx: Tx) => Promise<R>, options?: { timeout?: number; maxWait?: number }): Promise<R>;
  $disconnect(): Promise<void>;
};

export type Infrastructure<P, Tx extends SqlExecutor> = {
  logger: Logger;
  registry: Registry;
  prisma: P;
  /** The connections Prisma runs on, for hot paths that skip the ORM (int8 arrives as bigint). */
  pool: pg.Pool;
  runTx: TxRunner<Tx>;
  transact: Transact<Tx>;
  relay: Relay;
  nats: NatsConnection;
  js: JetStreamClient;
  /** Publishes events to JetStream without nats.js's per-request Error (the relays use it; docs/benchmarks/optimizations.md, session 22). */
  publisher: JetStreamPublisher;
  jsm: JetStreamManager;
  subjects: Subjects;
  shutdown: Shutdown;
  /**
   * Starts a consumer now (batched, on plain SQL); it is stopped on shutdown. By default a
   * durable consumer that marks each event in processed_events; with `checkpoint: true` one
   * that reads the stream in order and keeps one position in consumer_checkpoints (the
   * service's schema needs that table; docs/decisions/0162). A checkpointing consumer may
   * commit without waiting for the disk (`synchronousCommit: false`) and check envelopes'
   * shape only (`trustPayloads`): see docs/decisions/0166 for when that is safe.
   */
  consume<T extends EventType>(
    durable: string,
    types: T[],
    handler: EventHandler<SqlExecutor, T>,
    options?: { checkpoint?: boolean; synchronousCommit?: boolean; trustPayloads?: boolean; afterCommit?: () => void },
  ): Promise<RunningConsumer>;
  /** Is the service's database answering? */
  databaseUp(): Promise<boolean>;
  /** What the metrics port's `/health/ready` answers from (runGrpcService sets it). */
  probes: Probes;
};

export type InfrastructureOptions<P> = {
  service: string;
  env: CommonEnv;
  /** The service's prisma directory (schema.prisma and migrations/). */
  prismaDir: string;
  /** The Prisma client over the service's pool (see `poolAdapter`). */
  createPrisma: (pool: pg.Pool) => P;
  /** Redacted configuration, logged once at start. */
  config: Record<string, unknown>;
};

/**
 * The schedule every event relay of a service runs on (the outbox relay, the log relays
 * that tail a service's own rows): OUTBOX_POLL_MS backing off to OUTBOX_POLL_MAX_MS while
 * polls find nothing, and a linger from OUTBOX_LINGER_MS growing to OUTBOX_LINGER_MAX_MS
 * as the rate falls.
 */
export function relayTiming(env: Pick<CommonEnv, "OUTBOX_POLL_MS" | "OUTBOX_POLL_MAX_MS" | "OUTBOX_LINGER_MS" | "OUTBOX_LINGER_MAX_MS">) {
  return {
    pollMs: env.OUTBOX_POLL_MS,
    maxPollMs: Math.max(env.OUTBOX_POLL_MS, env.OUTBOX_POLL_MAX_MS),
    lingerMs: env.OUTBOX_LINGER_MS,
    maxLingerMs: env.OUTBOX_LINGER_MAX_MS,
  };
}

/**
 * Start-up in dependency order: logs and metrics, the database (created and
 * migrated), the broker and its stream, the outbox relay. Shutdown steps are
 * registered in reverse so callers only add what they start on top.
 */
export async function startInfrastructure<Tx extends SqlExecutor, P extends PrismaLike<Tx>>(options: InfrastructureOptions<P>): Promise<Infrastructure<P, Tx>> {
  const { env, service } = options;
  const logger = createLogger({ service, level: env.LOG_LEVEL, coalesceMs: env.LOG_COALESCE_MS });
  const shutdown = new Shutdown(logger, env.SHUTDOWN_TIMEOUT_MS);
  shutdown.install();
  logger.info({ config: options.config }, "starting");
  const registry = createRegistry(service);
  try {
    // First, so that everything started below runs under the context manager when tracing is on.
    const telemetry = await startTelemetry({
      service: env.OTEL_SERVICE_NAME ?? service,
      endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
      protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL,
      scheduleDelayMs: env.OTEL_BSP_SCHEDULE_DELAY,
      logger,
    });
    if (telemetry.enabled)
      logger.info({ endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL }, "tracing on: exporting spans over OTLP");
    const probes: Probes = {};
    const metrics = env.METRICS_PORT ? await startMetricsServer(registry, env.METRICS_PORT, "0.0.0.0", probes) : undefined;

    const url = await prepareDatabase({
      serverUrl: env.DATABASE_URL,
      name: env.DATABASE_NAME,
      schemaPath: `${options.prismaDir}/schema.prisma`,
      migrationsDir: `${options.prismaDir}/migrations`,
      migrate: env.MIGRATE_ON_START,
      log: (msg, fields) => logger.info(fields ?? {}, msg),
    });
    const pool = createPool(url, { poolSize: env.DATABASE_POOL_SIZE });
    const prisma = options.createPrisma(pool);
    const runTx: TxRunner<Tx> = (fn) => prisma.$transaction(fn, { timeout: 15_000, maxWait: 5_000 });
    const sqlTx = pgTransactions(pool);

    const nats = await connectNats(env.NATS_URL, service);
    const js = nats.jetstream();
    const jsm = await nats.jetstreamManager();
    const subjects = subjectsFor(env.NATS_NAMESPACE);
    await ensureStream(jsm, subjects);
    const publisher = new JetStreamPublisher(nats);

    const relay = new Relay({
      from: outboxTable({ runTx: pgTransactions(pool, { synchronousCommit: false }) }),
      js: publisher,
      subjects,
      source: service,
      logger,
      registry,
      ...relayTiming(env),
    });
    relay.start();
    const consumers: RunningConsumer[] = [];

    // Reverse order of start: consumers, relay (final flush), broker, database, metrics, telemetry (flush).
    shutdown.add("consumers", async () => {
      await Promise.all(consumers.map((c) => c.stop()));
    });
    shutdown.add("outbox relay", () => relay.stop());
    shutdown.add("nats", async () => {
      await nats.drain();
      publisher.close();
    });
    shutdown.add("database", () => prisma.$disconnect());
    if (metrics) shutdown.add("metrics", () => metrics.close());
    // Last: the spans of everything above have ended by now.
    if (telemetry.enabled) shutdown.add("telemetry", () => telemetry.shutdown());

    return {
      logger,
      registry,
      prisma,
      pool,
      runTx,
      transact: createTransact(runTx, relay),
      relay,
      nats,
      js,
      publisher,
      jsm,
      subjects,
      shutdown,
      async consume(durable, types, handler, options) {
        const c = options?.checkpoint
          ? await startCheckpointConsumer({
              js,
              jsm,
              subjects,
              name: durable,
              types,
              runTx: options.synchronousCommit === false ? pgTransactions(pool, { synchronousCommit: false }) : sqlTx,
              logger,
              registry,
              handler,
              lingerMs: env.CONSUMER_LINGER_MS,
              trustPayloads: options.trustPayloads ?? false,
              ...(options.afterCommit ? { afterCommit: options.afterCommit } : {}),
            })
          : await startConsumer({ js, jsm, subjects, durable, types, runTx: sqlTx, logger, registry, handler, lingerMs: env.CONSUMER_LINGER_MS });
        consumers.push(c);
        return c;
      },
      // On the pool Prisma runs on, without the ORM's query path: a probe's cost (docs/decisions/0309).
      databaseUp: () => ping(() => pool.query("SELECT 1")),
      probes,
    };
  } catch (err) {
    logger.fatal({ err }, "start-up failed");
    return shutdown.run("start-up failed", 1);
  }
}

/**
 * A gRPC service: infrastructure, then the server with the standard health
 * service. Health turns NOT_SERVING while the database does not answer, so
 * orchestrators stop routing to a replica that cannot do its work.
 */
export async function runGrpcService<Tx extends SqlExecutor, P extends PrismaLike<Tx>>(
  infra: Infrastructure<P, Tx>,
  options: { env: GrpcEnv; serviceNames: string[]; register: (server: GrpcServer) => Promise<void> | void },
): Promise<GrpcServer> {
  const { logger, registry, shutdown } = infra;
  let server: GrpcServer;
  try {
    server = new GrpcServer({ logger, registry, serviceToken: options.env.SERVICE_TOKEN, tls: readTls(options.env) });
    await options.register(server);
    const port = await server.listen(options.env.GRPC_HOST, options.env.GRPC_PORT);
    logger.info({ port, tls: server.secure }, "gRPC server listening");
    if (!server.secure) logger.warn("gRPC in plaintext: set GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY (production refuses plaintext; docs/decisions/0230)");
    if (options.env.GRPC_HEALTH_PORT) {
      const healthPort = await server.listenHealth(options.env.GRPC_HOST, options.env.GRPC_HEALTH_PORT);
      logger.info({ port: healthPort }, "gRPC health listener (plaintext, the health service only)");
    }
  } catch (err) {
    logger.fatal({ err }, "start-up failed");
    return shutdown.run("start-up failed", 1);
  }
  const watchdog = watchDatabase(infra, (up) => {
    for (const name of ["", ...options.serviceNames]) {
      const next = up ? "SERVING" : "NOT_SERVING";
      if (server.health.get(name) !== next) {
        server.health.set(name, next);
        if (name === "") logger.warn({ status: next }, "health changed");
      }
    }
  });
  server.health.beforeCheck = () => watchdog.fresh(HEALTH_CHECK_MS);
  // The same answer over HTTP on the metrics port, for the manifests' probes (docs/decisions/0309).
  infra.probes.ready = async () => {
    await watchdog.fresh(HEALTH_CHECK_MS).catch(() => undefined);
    return server.health.get("") === "SERVING";
  };
  // First in line: stop taking calls and let in-flight ones finish.
  shutdown.addFirst("grpc server", async () => {
    watchdog.stop();
    await server.shutdown(options.env.SHUTDOWN_TIMEOUT_MS);
  });
  return server;
}

/** The database check's interval while the answer is NOT_SERVING or has just changed, and the freshness a health Check asks for. */
const HEALTH_CHECK_MS = 5_000;
/** The longest interval, reached by doubling while the database keeps answering. */
const HEALTH_CHECK_MAX_MS = 60_000;

/**
 * The health watchdog's schedule (docs/decisions/0009, 0200): the database is asked every
 * 5 s while it does not answer or its answer has just changed; while it keeps answering,
 * the wait doubles up to a minute. Anything that says more goes at once: a connection the
 * server cut (a restart, a shutdown: the pool's "error" event) checks now, and a health
 * Check (a readiness probe) gets an answer no older than 5 s. An idle replica nobody
 * probes asks its database once a minute instead of every 5 s.
 */
export function watchDatabase(
  infra: { databaseUp(): Promise<boolean>; pool: { on(event: "error", listener: () => void): unknown; off(event: "error", listener: () => void): unknown } },
  report: (up: boolean) => void,
): { fresh(ms: number): Promise<void>; stop(): void } {
  let wait = HEALTH_CHECK_MS;
  let last: boolean | undefined;
  let checkedAt = 0;
  let current: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const check = (): Promise<void> =>
    (current ??= infra
      .databaseUp()
      .then((up) => {
        checkedAt = Date.now();
        wait = up && up === last ? Math.min(HEALTH_CHECK_MAX_MS, wait * 2) : HEALTH_CHECK_MS;
        last = up;
        // Stopped (the shutdown has begun and says NOT_SERVING): no answer turns it back.
        if (!stopped) report(up);
      })
      .finally(() => {
        current = undefined;
        schedule();
      }));
  const schedule = () => {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(() => void check(), wait);
    timer.unref();
  };
  const cut = () => void check();
  infra.pool.on("error", cut);
  schedule();
  return {
    fresh: (ms) => (stopped || Date.now() - checkedAt <= ms ? Promise.resolve() : check()),
    stop() {
      stopped = true;
      clearTimeout(timer);
      infra.pool.off("error", cut);
    },
  };
}

/** Everything a gRPC service's main needs, in one call. */
export async function startGrpcService<Tx extends SqlExecutor, P extends PrismaLike<Tx>>(
  options: InfrastructureOptions<P> & {
    env: GrpcEnv;
    serviceNames: string[];
    register: (server: GrpcServer, infra: Infrastructure<P, Tx>) => Promise<void> | void;
  },
): Promise<{ infra: Infrastructure<P, Tx>; server: GrpcServer }> {
  const infra = await startInfrastructure<Tx, P>(options);
  const server = await runGrpcService(infra, {
    env: options.env,
    serviceNames: options.serviceNames,
    register: (s) => options.register(s, infra),
  });
  return { infra, server };
}
