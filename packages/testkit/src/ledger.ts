import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { dropDatabase } from "@gateway/db-kit";
import { subjectsFor } from "@gateway/events";
import { checkHealth, type GrpcTls } from "@gateway/grpc-kit";
import { connect } from "nats";
import { testCerts } from "./certs.js";
import { freePort } from "./ports.js";
import { ServiceProcess } from "./process.js";
import { REPO_ROOT } from "./root.js";

/** The ledger's gRPC service name (its health check answers for it). */
const LEDGER_SERVICE = "gateway.ledger.v1.LedgerService";

export type LedgerService = {
  /** host:port of its gRPC server. */
  address: string;
  /** What a client passes as `serviceToken`. */
  serviceToken: string;
  /** What a client passes as `tls` (the test kit's CA, the edge's certificate); undefined in plaintext. */
  tls: GrpcTls | undefined;
  /** Its own database on the machine's PostgreSQL (for assertions). */
  databaseName: string;
  serverUrl: string;
  namespace: string;
  process: ServiceProcess;
  /** Starts the (stopped) process again and waits until it serves. */
  start(): Promise<void>;
  /** Stops the process (SIGTERM, or `signal`). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Stops it and removes its database and stream. */
  close(): Promise<void>;
};

async function serving(address: string, proc: ServiceProcess, tls: GrpcTls | undefined): Promise<void> {
  const until = Date.now() + 60_000;
  while ((await checkHealth(address, LEDGER_SERVICE, 500, tls).catch(() => "")) !== "SERVING") {
    if (!proc.running) throw new Error(`ledger exited:\n${proc.tail()}`);
    if (Date.now() > until) throw new Error(`ledger not serving after 60 s:\n${proc.tail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The built ledger (apps/ledger/dist/main.js) as a real process on a fresh database
 * and its own NATS namespace, both removed by `close`: what a service's own tests
 * talk to instead of a stand-in ("never mock our own services"). gRPC runs over mutual
 * TLS with the test kit's certificates, as in a stack (docs/decisions/0230), unless
 * `options.tls` is false.
 */
export async function startLedger(env: Record<string, string> = {}, options: { tls?: boolean } = {}): Promise<LedgerService> {
  const entry = join(REPO_ROOT, "apps", "ledger", "dist", "main.js");
  if (!existsSync(entry)) throw new Error(`${entry} is missing: build the ledger first (pnpm build)`);
  const run = randomBytes(4).toString("hex");
  const databaseName = `gw_test_ledger_proc_${run}`;
  const namespace = `tledger${run}`;
  const serverUrl = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const serviceToken = randomBytes(32).toString("hex");
  const certs = options.tls === false ? undefined : testCerts();
  const tls = certs?.tls("edge");
  const proc = new ServiceProcess(
    "ledger",
    entry,
    {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "test",
      LOG_LEVEL: "debug",
      // Every line at once (decision 0306): a test that reads the logs, say to find no secret in
      // them, reads all that was logged before it looked.
      LOG_COALESCE_MS: "0",
      DATABASE_URL: serverUrl,
      DATABASE_NAME: databaseName,
      GRPC_PORT: String(port),
      METRICS_PORT: "0",
      NATS_URL: natsUrl,
      NATS_NAMESPACE: namespace,
      OUTBOX_POLL_MS: "100",
      SHUTDOWN_TIMEOUT_MS: "5000",
      SERVICE_TOKEN: serviceToken,
      ...certs?.env("ledger"),
      ...env,
    },
    process.env.TEST_LOG_DIR ? join(process.env.TEST_LOG_DIR, `ledger-${run}`) : undefined,
  );
  proc.start();
  const close = async () => {
    await proc.stop();
    proc.close();
    const nc = await connect({ servers: natsUrl, name: "ledger-test" });
    await (await nc.jetstreamManager()).streams.delete(subjectsFor(namespace).stream).catch(() => undefined);
    await nc.drain();
    await dropDatabase(serverUrl, databaseName);
  };
  try {
    await serving(address, proc, tls);
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return {
    address,
    serviceToken,
    tls,
    databaseName,
    serverUrl,
    namespace,
    process: proc,
    async start() {
      proc.start();
      await serving(address, proc, tls);
    },
    stop: (signal) => proc.stop(signal),
    close,
  };
}
