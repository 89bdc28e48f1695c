import { databaseUrl } from "@gateway/db-kit";
import { connectNats, type NatsConnection } from "@gateway/events-runtime";
import { createClient, type Client } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { startLedger, type ServiceProcess } from "@gateway/testkit";
import { createDatabase, type LedgerDatabase } from "../db.js";

const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

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

/**
 * The built ledger (dist/main.js) as a real process on a fresh database and
 * its own NATS namespace (the test kit's `startLedger`), with a client and its
 * database at hand; `close` removes them.
 */
export async function startLedgerProcess(env: Record<string, string> = {}): Promise<LedgerProcess> {
  const ledger = await startLedger(env);
  const client = createClient(ledgerV1, ledger.address, { deadlineMs: 15_000, serviceToken: ledger.serviceToken, tls: ledger.tls });
  const db = createDatabase(databaseUrl(ledger.serverUrl, ledger.databaseName), 2);
  let nc: NatsConnection | undefined;
  return {
    address: ledger.address,
    client,
    db,
    namespace: ledger.namespace,
    process: ledger.process,
    async nats() {
      nc ??= await connectNats(NATS_URL, "ledger-test");
      return nc;
    },
    start: () => ledger.start(),
    async close() {
      client.close();
      await db.prisma.$disconnect();
      await nc?.drain();
      await ledger.close();
    },
  };
}
