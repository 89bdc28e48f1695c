import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startCallbackReceiver, startStack, type CallbackReceiver, type Stack } from "@gateway/testkit";
import { asKey, balance, leaseCustomer, quote, quoteAndLease, RECEIVER, RECEIVERS, waitJob, type LeaseCustomer } from "./support/tron.js";

// Sandbox (the default TRON_MODE): dry runs, nothing charged, no order, no callback.
let stack: Stack;
let customer: LeaseCustomer;
let receiver: CallbackReceiver;

beforeAll(async () => {
  receiver = await startCallbackReceiver();
  stack = await startStack({ services: ["ledger", "jobs"], env: { jobs: { CALLBACK_ALLOW_HTTP_LOOPBACK: "true", CALLBACK_POLL_MS: "50" } } });
  customer = await leaseCustomer(stack, 0);
});

afterAll(async () => {
  await stack?.shutdown();
  await receiver?.close();
});

describe("energy leases in sandbox mode", () => {
  it("quotes with the documented price and an expiry", async () => {
    const res = await quote(stack, customer, { energy: 65_000, duration_seconds: 3_600 });
    expect(res.status).toBe(200);
    // 100 + ceil(65000 × 3600 × 40000 / 3.6e9) = 100 + 2600
    expect(res.body.data).toMatchObject({ receiver: RECEIVER, energy: 65_000, duration_seconds: 3_600, cost_units: 2_700, cost: 0.27 });
    expect(res.body.data.quote_id).toMatch(/^quote_/);
    expect(Date.parse(res.body.data.expires_at)).toBeGreaterThan(Date.now());
  });

  it("creates a dry-run lease that succeeds without charge, order or callback, even with a zero balance", async () => {
    const { lease, quote: q } = await quoteAndLease(stack, customer, { callback_url: receiver.url, callback_secret: "s".repeat(16) });
    expect(lease.status).toBe(202);
    expect(lease.body.data).toMatchObject({ status: "pending", dry_run: true });
    const job = await waitJob(stack, customer, lease.body.data.job_id, (j) => j.status === "succeeded");
    expect(job.result).toMatchObject({ dry_run: true, lease_id: lease.body.data.lease_id, cost_units: String(q.cost_units) });
    expect(job.callback).toEqual({ state: "none", attempts: 0, last_status: null });
    expect(await balance(stack, customer)).toMatchObject({ available_units: 0, reserved_units: 0 });
    const view = await call(stack.edgeUrl, "GET", `/v1/apps/tron/leases/${lease.body.data.lease_id}`, { headers: asKey(customer) });
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({
      id: lease.body.data.lease_id,
      job_id: lease.body.data.job_id,
      status: "succeeded",
      dry_run: true,
      provider_order_id: null,
    });
    const list = await call(stack.edgeUrl, "GET", "/v1/apps/tron/leases", { headers: asKey(customer) });
    expect(list.body.data.map((l: { id: string }) => l.id)).toContain(lease.body.data.lease_id);
    // Give a would-be callback time to happen: the receiver must have seen nothing.
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received).toHaveLength(0);
  });

  it("answers every validation rule with the contract's status", async () => {
    const bad = async (body: Record<string, unknown>) => (await quote(stack, customer, body)).status;
    expect(await bad({ energy: 999 })).toBe(400);
    expect(await bad({ energy: 5_000_001 })).toBe(400);
    expect(await bad({ duration_seconds: 299 })).toBe(400);
    expect(await bad({ duration_seconds: 86_401 })).toBe(400);
    expect(await bad({ energy: 1_000.5 })).toBe(400);
    expect(await bad({ receiver: "TNotAnAddress" })).toBe(400);
    expect(await bad({ receiver: "TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgN" })).toBe(400); // checksum
    expect(await bad({ energy: 1_000, duration_seconds: 300 })).toBe(200);
    expect(await bad({ energy: 5_000_000, duration_seconds: 86_400 })).toBe(200);

    const lease = async (extra: Record<string, unknown>, quoteBody: Record<string, unknown> = {}) =>
      (await quoteAndLease(stack, customer, extra, {}, quoteBody)).lease;
    const expectError = (res: { status: number; body: any }, status: number, error: string) => {
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body).toMatchObject({ error, request_id: expect.any(String), message: expect.any(String) });
      expect(JSON.stringify(res.body)).not.toMatch(/stack|at \//);
    };
    expectError(await lease({ energy: 999 }), 400, "invalid_request");
    expectError(await lease({ duration_seconds: 86_401 }), 400, "invalid_request");
    expectError(await lease({ callback_url: "http://hooks.example.com/x", callback_secret: "s".repeat(16) }), 400, "invalid_request");
    expectError(await lease({ callback_url: "ftp://hooks.example.com/x", callback_secret: "s".repeat(16) }), 400, "invalid_request");
    expectError(await lease({ callback_url: "not a url", callback_secret: "s".repeat(16) }), 400, "invalid_request");
    expectError(await lease({ callback_url: "https://hooks.example.com/x" }), 400, "invalid_request");
    expectError(await lease({ callback_url: "https://hooks.example.com/x", callback_secret: "s".repeat(15) }), 400, "invalid_request");
    expectError(await lease({ callback_url: "https://hooks.example.com/x", callback_secret: "s".repeat(257) }), 400, "invalid_request");
    expect((await lease({ callback_url: "https://hooks.example.com/x", callback_secret: "s".repeat(256) })).status).toBe(202);

    expectError(await lease({ quote_id: "quote_doesnotexist" }), 409, "conflict");
    expectError(await lease({ energy: 70_000 }), 409, "conflict");
    expectError(await lease({ duration_seconds: 7_200 }), 409, "conflict");
    expectError(await lease({ receiver: RECEIVERS[1] }), 409, "conflict");
    const above = await lease({ max_cost: 0.2699 });
    expectError(above, 409, "conflict");
    expect(above.body.pricing).toEqual({ cost: 0.27 });
    expect((await lease({ max_cost: 0.27 })).status).toBe(202);
    expect((await lease({ max_cost: 0.27009 })).status).toBe(202);

    // Another tenant's quote is as unknown as a missing one.
    const other = await leaseCustomer(stack, 0);
    const theirs = await quote(stack, other);
    const d = theirs.body.data;
    expectError(
      await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", {
        headers: asKey(customer),
        body: { quote_id: d.quote_id, max_cost: 1, receiver: d.receiver, energy: d.energy, duration_seconds: d.duration_seconds },
      }),
      409,
      "conflict",
    );
    // Bad Idempotency-Key.
    expectError((await quoteAndLease(stack, customer, {}, { "Idempotency-Key": "has space" })).lease, 400, "invalid_request");
  });

  it("refuses an expired quote", async () => {
    await stack.stop("jobs");
    const env = stack.process("jobs").env;
    env.TRON_QUOTE_TTL_SECONDS = "1";
    await stack.start("jobs");
    try {
      const q = await quote(stack, customer);
      await new Promise((r) => setTimeout(r, 1_200));
      const d = q.body.data;
      const res = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", {
        headers: asKey(customer),
        body: { quote_id: d.quote_id, max_cost: d.cost, receiver: d.receiver, energy: d.energy, duration_seconds: d.duration_seconds },
      });
      expect(res.status).toBe(409);
      expect(res.body.message).toMatch(/expired/);
    } finally {
      await stack.stop("jobs");
      delete env.TRON_QUOTE_TTL_SECONDS;
      await stack.start("jobs");
    }
  });

  it("keeps leases and jobs to their tenant and their scopes", async () => {
    const { lease } = await quoteAndLease(stack, customer);
    const other = await leaseCustomer(stack, 0);
    expect((await call(stack.edgeUrl, "GET", `/v1/jobs/${lease.body.data.job_id}`, { headers: asKey(other) })).status).toBe(404);
    expect((await call(stack.edgeUrl, "GET", `/v1/apps/tron/leases/${lease.body.data.lease_id}`, { headers: asKey(other) })).status).toBe(404);
    const list = await call(stack.edgeUrl, "GET", "/v1/jobs", { headers: asKey(other) });
    expect(list.body.data).toEqual([]);
    const jobsOnly = await leaseCustomer(stack, 0, ["jobs:read"]);
    expect((await quote(stack, jobsOnly)).status).toBe(403);
    const leaseOnly = await leaseCustomer(stack, 0, ["tron:lease"]);
    expect((await call(stack.edgeUrl, "GET", "/v1/jobs", { headers: asKey(leaseOnly) })).status).toBe(403);
    expect((await call(stack.edgeUrl, "POST", "/v1/apps/tron/quote", { body: { receiver: RECEIVER, energy: 1000, duration_seconds: 300 } })).status).toBe(401);
  });

  it("answers a repeated Idempotency-Key with the same job, and other parameters with 409", async () => {
    const key = { "Idempotency-Key": `sandbox-${Date.now()}` };
    const q = (await quote(stack, customer)).body.data;
    const body = { quote_id: q.quote_id, max_cost: q.cost, receiver: q.receiver, energy: q.energy, duration_seconds: q.duration_seconds };
    const first = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", { headers: asKey(customer, key), body });
    const again = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", { headers: asKey(customer, key), body });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    const other = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", { headers: asKey(customer, key), body: { ...body, max_cost: q.cost + 1 } });
    expect(other.status).toBe(409);
  });
});
