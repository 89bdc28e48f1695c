import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { createClient, type Client } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { call, startStack, startTronMock, type Stack, type TronMock } from "@gateway/testkit";
import { customer, managedModel, mockProvider, operator, upstream, type Customer, type ManagedModel, type Operator } from "./support/managed-ai.js";
import { WebhookReceiver } from "./support/receivers.js";
import { RECEIVER, waitJob, type LeaseCustomer } from "./support/tron.js";

/*
 * Issue 40, finding 5 (docs/decisions/0028, addendum): a push or an energy lease
 * while the tenant's AI traffic keeps an allotment open. The balance views count the
 * allotment's unclaimed units as available (CONTRACT.md section 4), so a push or a
 * lease that needs them is served (sections 8, 9): the hold the ledger refuses is
 * asked again after the tenant's allotments give back what no call claimed. A 402
 * comes only when the money is really not there.
 */

let stack: Stack;
let provider: MockProvider;
let tron: TronMock;
let hooks: WebhookReceiver;
let op: Operator;
let model: ManagedModel;
let ledger: Client<typeof ledgerV1>;

const PUSH_PRICE = 1_000;
const LEASE_COST = 2_700; // 65,000 energy for an hour at the default price

beforeAll(async () => {
  provider = await mockProvider();
  tron = await startTronMock();
  hooks = await new WebhookReceiver().start();
  stack = await startStack({
    services: ["ledger", "managed-ai", "messaging", "jobs"],
    env: {
      "managed-ai": { ALLOTMENT_MIN_UNITS: "1", ALLOTMENT_IDLE_SECONDS: "600", RECONCILE_INTERVAL_MS: "1000" },
      messaging: { ALLOW_PRIVATE_TARGETS: "true", PUSH_PRICE_UNITS: String(PUSH_PRICE) },
      jobs: {
        TRON_MODE: "live",
        TRON_PROVIDER_URL: tron.providerUrl,
        TRON_NODE_URL: tron.nodeUrl,
        TRON_VERIFY_POLL_MS: "100",
        TRON_VERIFY_TIMEOUT_SECONDS: "5",
      },
    },
  });
  ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: stack.serviceToken, tls: stack.tls });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  // One unit per token: a chat request reserves a few hundred units and is charged a few dozen.
  model = await managedModel(stack, op, { alias: "tiny", upstreamId: "mock", inputPerMtok: 1_000_000, outputPerMtok: 1_000_000 });
}, 120_000);
afterAll(async () => {
  ledger?.close();
  await stack?.shutdown();
  await provider?.close();
  await tron?.close();
  await hooks?.close();
});

/** A tenant with `units`, a managed instance, and keys for AI, push and leases. */
async function tenant(units: number): Promise<Customer & { pushKey: string; leaseKey: string }> {
  const c = await customer(stack, op, { units, alias: "chat", defaultModel: model.alias });
  const key = async (scopes: string[]) => {
    const res = await call(stack.edgeUrl, "POST", "/console/keys", { token: c.token, body: { name: scopes[0], scopes } });
    expect(res.status).toBe(201);
    return res.body.data.key as string;
  };
  return { ...c, pushKey: await key(["push:send"]), leaseKey: await key(["tron:lease", "jobs:read"]) };
}

const chat = (c: Customer) =>
  fetch(`${stack.edgeUrl}/v1/apps/ai/chat/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": c.key },
    body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], max_tokens: 20 }),
  }).then(async (res) => {
    await res.arrayBuffer();
    return res.status;
  });

/** Steady AI traffic of the tenant (one call at a time) until `stop()`; answers the statuses it got. */
function steadyTraffic(c: Customer) {
  const statuses: number[] = [];
  let running = true;
  const done = (async () => {
    // A network error ends it (the stack going down after a failed assertion).
    while (running) {
      const status = await chat(c).catch(() => 0);
      if (status === 0) break;
      statuses.push(status);
    }
  })();
  return {
    statuses,
    async stop() {
      running = false;
      await done;
      return statuses;
    },
  };
}

/** The tenant's allotment, open, with what it holds. */
async function openAllotment(tenantId: string): Promise<{ units: number } | undefined> {
  const [row] = await stack.sql<{ units: string }>("managed-ai", "SELECT units::text FROM allotments WHERE tenant_id = $1 AND state = 'open'", [tenantId]);
  return row ? { units: Number(row.units) } : undefined;
}

async function waitForAllotment(tenantId: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const a = await openAllotment(tenantId);
    if (a) return a.units;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no allotment opened");
}

/** What the ledger itself holds available for the tenant (the raw account, without allotments' rest). */
async function rawAvailable(tenantId: string): Promise<number> {
  const [row] = await stack.sql<{ available: string }>("ledger", "SELECT available::text FROM accounts WHERE tenant_id = $1", [tenantId]);
  return Number(row!.available);
}

async function invariantOk(tenantId: string) {
  const check = await ledger.CheckInvariant({ tenant_id: tenantId });
  expect(check.ok).toBe(true);
}

describe("a push and a lease during steady AI traffic", () => {
  it("a push that needs the allotment's unclaimed units is sent, not refused", async () => {
    const c = await tenant(4_000);
    const traffic = steadyTraffic(c);
    const allotted = await waitForAllotment(c.tenantId);
    // Three targets at 1,000: more than the ledger holds available outside the allotment.
    expect(await rawAvailable(c.tenantId)).toBeLessThan(3 * PUSH_PRICE);
    expect(allotted).toBeGreaterThan(0);
    const res = await call(stack.edgeUrl, "POST", "/console/services", {
      token: c.token,
      body: {
        service_id: "webhook-push",
        alias: "alerts",
        status: "active",
        config: { targets: ["a", "b", "c"].map((id) => ({ id, type: "webhook", url: `${hooks.url}/${id}`, enabled: true })) },
      },
    });
    expect(res.status).toBe(201);
    const sent = await call(stack.edgeUrl, "POST", "/v1/apps/webhook-push/alerts/send", {
      headers: { "X-API-Key": c.pushKey },
      body: { title: "Deploy", text: "v2 is live" },
    });
    const statuses = await traffic.stop();
    expect(sent.status).toBe(200);
    expect(sent.body.data).toMatchObject({ charged_units: 3 * PUSH_PRICE });
    // The AI calls went on; any 402 among them came once the push had the money.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 402)).toBe(true);
    await invariantOk(c.tenantId);
  });

  it("a lease that needs them is reserved, and a lease the money is really not there for gets a 402", async () => {
    const c = await tenant(3_400);
    const lease: LeaseCustomer = { tenantId: c.tenantId, token: c.token, key: c.leaseKey };
    const traffic = steadyTraffic(c);
    await waitForAllotment(c.tenantId);
    expect(await rawAvailable(c.tenantId)).toBeLessThan(LEASE_COST);
    const q = await call(stack.edgeUrl, "POST", "/v1/apps/tron/quote", {
      headers: { "X-API-Key": lease.key },
      body: { receiver: RECEIVER, energy: 65_000, duration_seconds: 3_600 },
    });
    expect(q.status).toBe(200);
    expect(q.body.data.cost_units).toBe(LEASE_COST);
    const d = q.body.data;
    const leased = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", {
      headers: { "X-API-Key": lease.key },
      body: { quote_id: d.quote_id, max_cost: d.cost, receiver: d.receiver, energy: d.energy, duration_seconds: d.duration_seconds },
    });
    expect(leased.status).toBe(202);
    await traffic.stop();
    await waitJob(stack, lease, leased.body.data.job_id, (job) => job.status === "succeeded");
    // A second lease: what is left is really short of it, allotments and all.
    const q2 = await call(stack.edgeUrl, "POST", "/v1/apps/tron/quote", {
      headers: { "X-API-Key": lease.key },
      body: { receiver: RECEIVER, energy: 65_000, duration_seconds: 3_600 },
    });
    const d2 = q2.body.data;
    const refused = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", {
      headers: { "X-API-Key": lease.key },
      body: { quote_id: d2.quote_id, max_cost: d2.cost, receiver: d2.receiver, energy: d2.energy, duration_seconds: d2.duration_seconds },
    });
    expect(refused.status).toBe(402);
    const view = await call(stack.edgeUrl, "GET", "/console/balance", { token: c.token });
    expect(view.body.data.available_units).toBeLessThan(LEASE_COST);
    await invariantOk(c.tenantId);
  });
});
