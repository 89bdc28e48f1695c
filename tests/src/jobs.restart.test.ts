import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  call,
  startCallbackReceiver,
  startTronMock,
  startStack,
  type CallbackReceiver,
  type ReceivedCallback,
  type Stack,
  type TronMock,
} from "@gateway/testkit";
import { asKey, balance, eventually, ledgerInvariant, leaseCustomer, quoteAndLease, randomSecret, waitJob } from "./support/tron.js";

// The jobs service killed (SIGKILL) in the middle of a job and of a callback retry schedule.
let stack: Stack;
let tron: TronMock;
const receivers: CallbackReceiver[] = [];
const COST = 2_700;

beforeAll(async () => {
  tron = await startTronMock();
  stack = await startStack({
    services: ["ledger", "jobs"],
    env: {
      jobs: {
        TRON_MODE: "live",
        TRON_PROVIDER_URL: tron.providerUrl,
        TRON_NODE_URL: tron.nodeUrl,
        TRON_VERIFY_POLL_MS: "200",
        TRON_VERIFY_TIMEOUT_SECONDS: "300",
        JOBS_ACK_WAIT_MS: "5000",
        CALLBACK_ALLOW_HTTP_LOOPBACK: "true",
        CALLBACK_BASE_DELAY_MS: "1500",
        CALLBACK_POLL_MS: "50",
      },
    },
  });
});

afterAll(async () => {
  await stack?.shutdown();
  await tron?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(respond?: (n: number) => number): Promise<CallbackReceiver> {
  const r = await startCallbackReceiver(respond);
  receivers.push(r);
  return r;
}

const groups = (received: ReceivedCallback[]) => {
  const by = new Map<string, ReceivedCallback[]>();
  for (const r of received) by.set(r.headers["x-service-event-id"]!, [...(by.get(r.headers["x-service-event-id"]!) ?? []), r]);
  return [...by.values()];
};

async function crashAndRestartJobs(between?: () => void): Promise<void> {
  await stack.stop("jobs", "SIGKILL");
  between?.();
  await stack.start("jobs");
}

describe("the jobs service restarting", () => {
  it("finishes a job that was waiting for the chain, without ordering or charging twice", async () => {
    tron.set({ delegation: "never" });
    const r = await receiver();
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c, { callback_url: r.url, callback_secret: randomSecret() });
    const jobId = lease.body.data.job_id;
    // Ordered, verifying, its `running` callback delivered: the middle of the job.
    await eventually(
      "ordered and verifying",
      () => call(stack.edgeUrl, "GET", `/v1/apps/tron/leases/${lease.body.data.lease_id}`, { headers: asKey(c) }),
      (res) => res.body.data?.status === "running" && res.body.data?.provider_order_id !== null,
    );
    await waitJob(stack, c, jobId, (j) => j.callback.state === "delivered");
    expect(tron.nodeCalls).toBeGreaterThan(0);

    await crashAndRestartJobs(() => tron.set({ delegation: "immediate" }));

    const job = await waitJob(stack, c, jobId, (j) => j.status === "succeeded" && j.callback.state === "delivered", 90_000);
    expect(job.result).toMatchObject({ dry_run: false, cost_units: String(COST) });
    expect(tron.orders.get(jobId)?.requests).toBe(1);
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000 - COST, reserved_units: 0 });
    await eventually(
      "both events delivered",
      async () => groups(r.received).filter((g) => g.some((x) => x.status === 200)).length,
      (n) => n === 2,
    );
    const events = groups(r.received);
    expect(events.map((g) => JSON.parse(g[0]!.body).job.status)).toEqual(["running", "succeeded"]);
    expect(events.map((g) => g.filter((x) => x.status === 200).length)).toEqual([1, 1]);
  });

  it("resumes a callback retry schedule where it stood, with the same event id", async () => {
    tron.set({ delegation: "immediate" });
    const r = await receiver((n) => (n <= 2 ? 500 : 200));
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c, { callback_url: r.url, callback_secret: randomSecret() });
    const jobId = lease.body.data.job_id;
    // Two failed attempts recorded, the third scheduled (1.5 s × 2, with jitter, ahead).
    await eventually(
      "two failed attempts recorded",
      () =>
        stack.sql<{ attempts: number; state: string }>("jobs", "SELECT attempts, state FROM job_callback_deliveries WHERE job_id = $1 ORDER BY seq LIMIT 1", [
          jobId,
        ]),
      (rows) => rows[0]?.attempts === 2 && rows[0]?.state === "pending" && r.received.length === 2,
    );

    await crashAndRestartJobs();

    await waitJob(stack, c, jobId, (j) => j.status === "succeeded" && j.callback.state === "delivered", 90_000);
    await eventually(
      "both events delivered",
      async () => groups(r.received).filter((g) => g.some((x) => x.status === 200)).length,
      (n) => n === 2,
    );
    const events = groups(r.received);
    expect(events.map((g) => g.map((x) => x.status))).toEqual([[500, 500, 200], [200]]);
    // The receiver records a request before the dispatcher records its answer: wait for the rows to settle.
    const rows = await eventually(
      "deliveries recorded",
      () =>
        stack.sql<{ attempts: number; state: string }>("jobs", "SELECT attempts, state FROM job_callback_deliveries WHERE job_id = $1 ORDER BY seq", [jobId]),
      (found) => found.every((d) => d.state !== "pending"),
    );
    expect(rows).toEqual([
      { attempts: 3, state: "delivered" },
      { attempts: 1, state: "delivered" },
    ]);
  });

  it("keeps the ledger invariant", async () => {
    const res = await ledgerInvariant(stack);
    expect(res.ok, JSON.stringify(res.detail)).toBe(true);
  });
});
