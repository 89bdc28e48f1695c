import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, startTronMock, startStack, type Stack, type TronMock } from "@gateway/testkit";
import { asKey, balance, eventually, ledgerInvariant, leaseCustomer, quote, quoteAndLease, RECEIVERS, waitJob } from "./support/tron.js";

// Live mode against local mocks of the rental provider and the TRON node.
let stack: Stack;
let tron: TronMock;
const COST = 2_700; // 65 000 energy for an hour at the default price

beforeAll(async () => {
  tron = await startTronMock();
  stack = await startStack({
    services: ["ledger", "jobs"],
    env: {
      jobs: {
        TRON_MODE: "live",
        TRON_PROVIDER_URL: tron.providerUrl,
        TRON_NODE_URL: tron.nodeUrl,
        TRON_VERIFY_POLL_MS: "100",
        TRON_VERIFY_TIMEOUT_SECONDS: "3",
      },
    },
  });
});

afterAll(async () => {
  await stack?.shutdown();
  await tron?.close();
});

beforeEach(() => tron.set({ providerFailStatus: undefined, delegation: "immediate" }));

describe("energy leases in live mode", () => {
  it("reserves, orders once, verifies the delegation on chain and captures the quote's cost", async () => {
    const c = await leaseCustomer(stack, 10_000);
    const { lease, quote: q } = await quoteAndLease(stack, c);
    expect(q.cost_units).toBe(COST);
    expect(lease.status).toBe(202);
    expect(lease.body.data).toMatchObject({ status: "pending", dry_run: false });
    const jobId = lease.body.data.job_id;
    const job = await waitJob(stack, c, jobId, (j) => j.status === "succeeded");
    expect(job).toMatchObject({ type: "tron.energy_lease", error: null, result: { dry_run: false, energy: 65_000, cost_units: String(COST) } });
    expect(job.result.delegated_energy).toBeGreaterThanOrEqual(65_000);
    expect(await balance(stack, c)).toEqual({ currency: "USD", available_units: 10_000 - COST, reserved_units: 0 });
    expect(tron.orders.get(jobId)).toMatchObject({ receiver: RECEIVERS[0], energy: 65_000, durationSeconds: 3_600, requests: 1 });
    const view = await call(stack.edgeUrl, "GET", `/v1/apps/tron/leases/${lease.body.data.lease_id}`, { headers: asKey(c) });
    expect(view.body.data).toMatchObject({ status: "succeeded", dry_run: false, provider_order_id: tron.orders.get(jobId)!.id, cost_units: COST });
    // The job's life is in the audit trail (which its events reach after the job's answer: they are relayed).
    const life = ["pending", "running", "tron.lease_ordered", "succeeded"];
    const audit = await eventually(
      "the job's events in the audit trail",
      () =>
        stack.sql<{ type: string; to: string | null }>(
          "jobs",
          "SELECT type, data->>'to' AS to FROM audit_events WHERE data->>'job_id' = $1 ORDER BY occurred_at",
          [jobId],
        ),
      (rows) => life.every((step) => rows.some((a) => (a.to ?? a.type) === step)),
      10_000,
    );
    expect(audit.map((a) => a.to ?? a.type)).toEqual(expect.arrayContaining(life));
  });

  it("answers 402 when the balance is short, creates no job and orders nothing", async () => {
    const c = await leaseCustomer(stack, COST - 1);
    const before = tron.orderRequests.length;
    const { lease } = await quoteAndLease(stack, c);
    expect(lease.status).toBe(402);
    expect(lease.body).toMatchObject({ error: "insufficient_balance", request_id: expect.any(String) });
    expect((await call(stack.edgeUrl, "GET", "/v1/jobs", { headers: asKey(c) })).body.data).toEqual([]);
    expect(await balance(stack, c)).toMatchObject({ available_units: COST - 1, reserved_units: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect(tron.orderRequests.length).toBe(before);
  });

  it("voids the reservation when the provider refuses the order", async () => {
    tron.set({ providerFailStatus: 503 });
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c);
    expect(lease.status).toBe(202);
    const job = await waitJob(stack, c, lease.body.data.job_id, (j) => j.status === "failed");
    expect(job.error).toMatchObject({ code: "provider_refused" });
    expect(job.result).toBeNull();
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000, reserved_units: 0 });
  });

  it("ends `expired` and refunds when the delegation never shows on chain", async () => {
    tron.set({ delegation: "never" });
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c);
    const running = await waitJob(stack, c, lease.body.data.job_id, (j) => j.status === "running");
    expect(running.status).toBe("running");
    expect((await balance(stack, c)).reserved_units).toBe(COST);
    const job = await waitJob(stack, c, lease.body.data.job_id, (j) => j.status === "expired", 30_000);
    expect(job.error).toMatchObject({ code: "verification_timeout" });
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000, reserved_units: 0 });
    expect(tron.orders.get(lease.body.data.job_id)?.requests).toBe(1);
  });

  it("creates one job, charged once, for concurrent identical requests with one Idempotency-Key", async () => {
    const c = await leaseCustomer(stack, 10_000);
    const q = (await quote(stack, c)).body.data;
    const body = { quote_id: q.quote_id, max_cost: q.cost, receiver: q.receiver, energy: q.energy, duration_seconds: q.duration_seconds };
    const headers = asKey(c, { "Idempotency-Key": "lease-once:1" });
    const answers = await Promise.all(Array.from({ length: 8 }, () => call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", { headers, body })));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(202));
    const jobIds = new Set(answers.map((a) => a.body.data.job_id));
    expect(jobIds.size).toBe(1);
    const [jobId] = [...jobIds] as [string];
    await waitJob(stack, c, jobId, (j) => j.status === "succeeded");
    // A repeat after completion: the same answer, nothing more charged.
    const late = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", { headers, body });
    expect(late.status).toBe(202);
    expect(late.body).toEqual(answers[0]!.body);
    expect(await balance(stack, c)).toMatchObject({ available_units: 10_000 - COST, reserved_units: 0 });
    expect((await call(stack.edgeUrl, "GET", "/v1/jobs", { headers: asKey(c) })).body.data).toHaveLength(1);
    expect(tron.orders.get(jobId)?.requests).toBe(1);
    // The same key with other parameters.
    const other = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", {
      headers,
      body: { ...body, callback_url: "https://hooks.example.com/x", callback_secret: "s".repeat(20) },
    });
    expect(other.status).toBe(409);
    // The same key in another tenant is another request.
    const d = await leaseCustomer(stack, 10_000);
    const theirs = await quoteAndLease(stack, d, {}, { "Idempotency-Key": "lease-once:1" });
    expect(theirs.lease.status).toBe(202);
    expect(theirs.lease.body.data.job_id).not.toBe(jobId);
  });

  it("keeps the ledger invariant after all of the above", async () => {
    const res = await ledgerInvariant(stack);
    expect(res.ok, JSON.stringify(res.detail)).toBe(true);
  });
});
