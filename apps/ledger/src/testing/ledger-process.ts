import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { databaseUrl, dropDatabase } from "@gateway/db-kit";
import { connectNats, subjectsFor, type NatsConnection } from "@gateway/events";
import { checkHealth, createClient, type Client } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { freePort, ServiceProcess } from "@gateway/testkit";
import { createDatabase, type LedgerDatabase } from "../db.js";
import { SERVER_URL } from "./ledger-database.js";

const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const ENTRY = fileURLToPath(new URL("../../dist/main.js", import.meta.url));

export type LedgerProcess = {
  address: string;
  client: Client<typeof ledgerV1>;
  /** The ledger's own database (for assertions). */
  db: LedgerDatabase;
  namespace: string;
  nats(): Promise<NatsConnection>;
  process: ServiceProcess;
  /** Starts the (stopped) process again and waits until it serves. */
  start(): Promise<void>;
  close(): Promise<void>;
};

async function serving(address: string, proc: ServiceProcess): Promise<void> {
  const until = Date.now() + 60_000;
  while ((await checkHealth(address, ledgerV1.serviceName, 500).catch(() => "")) !== "SERVING") {
    if (!proc.running) throw new Error(`ledger exited:\n${proc.tail()}`);
    if (Date.now() > until) throw new Error(`ledger not serving after 60 s:\n${proc.tail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The built ledger (dist/main.js) as a real process on a fresh database and
 * its own NATS namespace, both removed by `close`.
 */
export async function startLedgerProcess(env: Record<string, string> = {}): Promise<LedgerProcess> {
  const run = randomBytes(4).toString("hex");
  const name = `gw_test_ledger_proc_${run}`;
  const namespace = `tledger${run}`;
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const serviceToken = randomBytes(32).toString("hex");
  const proc = new ServiceProcess("ledger", ENTRY, {
    PATH: process.env.PATH ?? "",
    NODE_ENV: "test",
    LOG_LEVEL: "debug",
    DATABASE_URL: SERVER_URL,
    DATABASE_NAME: name,
    GRPC_PORT: String(port),
    METRICS_PORT: "0",
    NATS_URL,
    NATS_NAMESPACE: namespace,
    OUTBOX_POLL_MS: "100",
    SHUTDOWN_TIMEOUT_MS: "5000",
    SERVICE_TOKEN: serviceToken,
    ...env,
  });
  proc.start();
  let nc: NatsConnection | undefined;
  let db: LedgerDatabase | undefined;
  const client = createClient(ledgerV1, address, { deadlineMs: 15_000, serviceToken });
  const close = async () => {
    client.close();
    await proc.stop();
    proc.close();
    await db?.prisma.$disconnect();
    nc ??= await connectNats(NATS_URL, "ledger-test");
    await (await nc.jetstreamManager()).streams.delete(subjectsFor(namespace).stream).catch(() => undefined);
    await nc.drain();
    await dropDatabase(SERVER_URL, name);
  };
  try {
    await serving(address, proc);
    db = createDatabase(databaseUrl(SERVER_URL, name), 2);
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return {
    address,
    client,
    db,
    namespace,
    process: proc,
    async nats() {
      nc ??= await connectNats(NATS_URL, "ledger-test");
      return nc;
    },
    async start() {
      proc.start();
      await serving(address, proc);
    },
    close,
  };
}
