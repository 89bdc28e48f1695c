import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { createClient } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { startStack, type Stack } from "@gateway/testkit";
import {
  balance,
  customer,
  expectedCost,
  inputBound,
  managedModel,
  mockProvider,
  operator,
  upstream,
  type Customer,
  type ManagedModel,
  type Operator,
} from "./support/managed-ai.js";
import { settledBooks } from "./support/money-audit.js";
import { eventually } from "./support/operators.js";
import { prng } from "./support/prng.js";

/*
 * Issue 28, docs/decisions/0027 and 0028: metered calls spend from one allotment per
 * tenant, claimed in their usage record's statement, on two managed-ai replicas at once;
 * charges are posted to the ledger in batches. Randomized concurrent spending, a tenant
 * spending down to zero (a 402 only when the money is not there), and kill -9 of
 * managed-ai and of the ledger in the middle of bursts: every record ends posted,
 * reviewed with a hold of its own, or failed, exactly once, and the journal equals the
 * records once the reconciler has closed the allotments.
 */

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;
let edge2: string;

const FAST = {
  RECONCILE_INTERVAL_MS: "500",
  RECONCILE_RESERVED_AFTER_SECONDS: "3",
  RECONCILE_SETTLED_AFTER_SECONDS: "2",
  ALLOTMENT_IDLE_SECONDS: "2",
  ALLOTMENT_MIN_UNITS: "1",
  ALLOTMENT_POST_LINGER_MS: "50",
  LEDGER_DEADLINE_MS: "1500",
};

beforeAll(async () => {
  provider = await mockProvider();
  stack = await startStack({ services: ["ledger", "managed-ai"], env: { "managed-ai": FAST } });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  model = await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 150_000_007, outputPerMtok: 600_000_011 });
  const managedAi2 = await stack.addReplica("managed-ai", "managed-ai-2", FAST);
  edge2 = await stack.addEdge("edge-2", { MANAGED_AI_GRPC_URL: managedAi2 });
}, 120_000);
afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});

const messages = [{ role: "user", content: "Spend from the allotment, a little at a time." }];
const reservationOf = (maxTokens: number) => expectedCost(inputBound(messages), BigInt(maxTokens), model);

function chat(baseUrl: string, c: Customer, maxTokens: number): Promise<number> {
  return fetch(`${baseUrl}/v1/apps/ai/chat/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": c.key },
    body: JSON.stringify({ messages, max_tokens: maxTokens }),
  })
    .then(async (res) => {
      await res.arrayBuffer();
      return res.status;
    })
    .catch(() => 0);
}

/** Waits until the reconciler has closed every allotment of the tenant, then audits the books. */
async function closedBooks(c: Customer, credit: number) {
  await eventually(
    () => stack.sql<{ n: number }>("managed-ai", "SELECT count(*)::int AS n FROM allotments WHERE tenant_id = $1 AND state <> 'closed'", [c.tenantId]),
    (rows) => rows[0]!.n === 0,
    60_000,
  );
  const audit = await settledBooks(stack, [c.tenantId], 30_000);
  expect(audit.problems).toEqual([]);
  // The journal: every charge of a completed record is one transfer, a capture of its own hold or a post from an allotment.
  const [journal] = await stack.sql<{ posted: string; captured: string; posts: number }>(
    "ledger",
    `SELECT coalesce(sum(units) FILTER (WHERE kind = 'post'), 0)::text AS posted, coalesce(sum(units) FILTER (WHERE kind = 'capture'), 0)::text AS captured,
       count(*) FILTER (WHERE kind = 'post')::int AS posts
     FROM transfers WHERE tenant_id = $1`,
    [c.tenantId],
  );
  expect(BigInt(journal!.posted) + BigInt(journal!.captured)).toBe(audit.charged);
  const [open] = await stack.sql<{ n: number }>("ledger", "SELECT count(*)::int AS n FROM allotments WHERE tenant_id = $1 AND closed_at IS NULL", [c.tenantId]);
  expect(open!.n).toBe(0);
  const ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: stack.serviceToken, tls: stack.tls });
  try {
    expect((await ledger.CheckInvariant({ tenant_id: c.tenantId })).ok).toBe(true);
  } finally {
    ledger.close();
  }
  const held = await stack.sql<{ units: string }>(
    "managed-ai",
    "SELECT coalesce(sum(reserved_units), 0)::text AS units FROM usage_records WHERE tenant_id = $1 AND status = 'review'",
    [c.tenantId],
  );
  expect(await balance(stack, c)).toEqual({ available_units: credit - Number(audit.charged) - Number(held[0]!.units), reserved_units: Number(held[0]!.units) });
  return { audit, posts: journal!.posts };
}

describe("allotments", () => {
  it("randomized concurrent spending on two replicas: most calls never reach the ledger, and the journal equals the records", async () => {
    const credit = 5_000_000;
    const c = await customer(stack, op, { units: credit, alias: "chat", defaultModel: "small" });
    const random = prng(28);
    const statuses: number[] = [];
    for (let wave = 0; wave < 6; wave++) {
      statuses.push(...(await Promise.all(Array.from({ length: 24 }, () => chat(random() < 0.5 ? stack.edgeUrl : edge2, c, 5 + Math.floor(random() * 60))))));
      // In flight: the balance view shows the claims as reserved, the rest as available.
      const view = await balance(stack, c);
      expect(view.available_units + view.reserved_units).toBeLessThanOrEqual(credit);
    }
    expect(
      statuses.every((s) => s === 200),
      JSON.stringify(statuses),
    ).toBe(true);
    const fromAllotments = await stack.sql<{ n: number }>(
      "managed-ai",
      "SELECT count(*)::int AS n FROM usage_records WHERE tenant_id = $1 AND allotment_id IS NOT NULL",
      [c.tenantId],
    );
    const ownHolds = await stack.sql<{ n: number }>(
      "ledger",
      "SELECT count(*)::int AS n FROM transfers WHERE tenant_id = $1 AND operation_id LIKE 'reserve:%'",
      [c.tenantId],
    );
    expect(fromAllotments[0]!.n).toBeGreaterThan(statuses.length / 2);
    expect(ownHolds[0]!.n + fromAllotments[0]!.n).toBe(statuses.length);
    const { posts } = await closedBooks(c, credit);
    expect(posts).toBe(fromAllotments[0]!.n);
  }, 120_000);

  it("a tenant spends down to zero: a request is refused only when the money is not there", async () => {
    const maxTokens = 20;
    const reservation = Number(reservationOf(maxTokens));
    // Room for about 40 reservations; usage is below the reservation, so more calls fit.
    const credit = reservation * 40 + 7;
    const c = await customer(stack, op, { units: credit, alias: "chat", defaultModel: "small" });
    // Concurrent bursts on both replicas until the first refusal...
    let refusals = 0;
    for (let wave = 0; wave < 50 && refusals === 0; wave++) {
      const statuses = await Promise.all(Array.from({ length: 8 }, (_, i) => chat(i % 2 ? edge2 : stack.edgeUrl, c, maxTokens)));
      expect(
        statuses.every((s) => s === 200 || s === 402),
        JSON.stringify(statuses),
      ).toBe(true);
      refusals += statuses.filter((s) => s === 402).length;
    }
    expect(refusals).toBeGreaterThan(0);
    const served = await stack.sql<{ n: number }>(
      "managed-ai",
      "SELECT count(*)::int AS n FROM usage_records WHERE tenant_id = $1 AND allotment_id IS NOT NULL",
      [c.tenantId],
    );
    expect(served[0]!.n).toBeGreaterThan(10);
    // ...then one at a time: each refusal must find less than the reservation anywhere.
    for (let i = 0; i < 40; i++) {
      const status = await chat(i % 2 ? edge2 : stack.edgeUrl, c, maxTokens);
      expect([200, 402]).toContain(status);
      if (status === 402) {
        const view = await eventually(
          () => balance(stack, c),
          (v) => v.reserved_units === 0,
          5_000,
        );
        expect(view.available_units, JSON.stringify(view)).toBeLessThan(reservation);
        break;
      }
    }
    const { audit } = await closedBooks(c, credit);
    expect(credit - Number(audit.charged)).toBeLessThan(reservation);
  }, 180_000);

  it("kill -9 of a managed-ai replica in the middle of a burst: its records are posted, reviewed or failed exactly once", async () => {
    const credit = 5_000_000;
    const c = await customer(stack, op, { units: credit, alias: "chat", defaultModel: "small" });
    // Warm: the tenant has an allotment.
    expect(await chat(edge2, c, 10)).toBe(200);
    provider.set({ delayMs: 1_500 });
    const burst = Promise.all(Array.from({ length: 40 }, (_, i) => chat(i % 2 ? edge2 : stack.edgeUrl, c, 10 + (i % 30))));
    await new Promise((r) => setTimeout(r, 500));
    await stack.stop("managed-ai-2", "SIGKILL");
    const statuses = await burst;
    provider.set({ delayMs: 0 });
    expect(
      statuses.every((s) => [200, 0, 502, 503].includes(s)),
      JSON.stringify(statuses),
    ).toBe(true);
    await stack.start("managed-ai-2");
    const { audit } = await closedBooks(c, credit);
    expect(audit.records).toBeGreaterThanOrEqual(statuses.filter((s) => s === 200).length);
    // The kill hit calls in flight: their records wait in review with holds carved out of the allotment.
    expect(audit.byStatus.review ?? 0, JSON.stringify(audit.byStatus)).toBeGreaterThan(0);
    expect(audit.byStatus.completed ?? 0).toBeGreaterThanOrEqual(statuses.filter((s) => s === 200).length);
  }, 180_000);

  it("kill -9 of the ledger in the middle of a burst: calls that fit the allotment go on, charges are posted once it is back", async () => {
    const credit = 5_000_000;
    const c = await customer(stack, op, { units: credit, alias: "chat", defaultModel: "small" });
    expect(await chat(stack.edgeUrl, c, 10)).toBe(200);
    await eventually(
      () => stack.sql<{ n: number }>("managed-ai", "SELECT count(*)::int AS n FROM allotments WHERE tenant_id = $1 AND state = 'open'", [c.tenantId]),
      (rows) => rows[0]!.n === 1,
      5_000,
    );
    await stack.stop("ledger", "SIGKILL");
    const during = await Promise.all(Array.from({ length: 20 }, (_, i) => chat(i % 2 ? edge2 : stack.edgeUrl, c, 10)));
    // The allotment covers them: answered without the ledger.
    expect(during.filter((s) => s === 200).length, JSON.stringify(during)).toBe(20);
    await stack.start("ledger");
    const { audit } = await closedBooks(c, credit);
    expect(audit.byStatus.completed).toBe(21);
  }, 180_000);
});
