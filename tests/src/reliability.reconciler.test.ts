import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { call, startStack, type Stack } from "@gateway/testkit";
import { balance, customer, managedModel, mockProvider, operator, upstream, usageRecord, type Customer, type Operator } from "./support/managed-ai.js";
import { eventually } from "./support/operators.js";
import { settledBooks } from "./support/money-audit.js";

/*
 * Issue 10: unknown outcomes resolve themselves once the ledger answers again.
 * The reconciler runs every second here, treats a `reserved` record older
 * than 5 s as orphaned, and checks the capture of a record completed 2 s ago.
 */

let stack: Stack;
let provider: MockProvider;
let op: Operator;

beforeAll(async () => {
  provider = await mockProvider();
  stack = await startStack({
    services: ["ledger", "managed-ai", "jobs"],
    // A hold per request: these cases are about holds (allotments have their own: reliability.allotments.test.ts).
    env: {
      "managed-ai": {
        RECONCILE_INTERVAL_MS: "1000",
        RECONCILE_RESERVED_AFTER_SECONDS: "5",
        RECONCILE_SETTLED_AFTER_SECONDS: "2",
        LEDGER_DEADLINE_MS: "1500",
        ALLOTMENTS: "false",
      },
    },
  });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 });
});
afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});

const messages = [{ role: "user", content: "Count the holds of the ledger, please." }];

async function chat(c: Customer, alias: string, stream = false) {
  const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/${alias}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": c.key },
    body: JSON.stringify({ messages, max_tokens: 30, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) }),
  });
  await res.text();
  return { status: res.status, id: res.headers.get("x-request-id")! };
}

/** A stream that ends without usage: a real record in review with its hold open in the ledger. */
async function reviewWithOpenHold(c: Customer, alias: string): Promise<string> {
  provider.set({ omitUsage: true });
  const { id } = await chat(c, alias, true);
  provider.set({ omitUsage: undefined });
  expect(await usageRecord(stack, id)).toMatchObject({ status: "review", error_code: "usage_unavailable" });
  return id;
}

const setRecord = (id: string, sql: string, values: unknown[] = []) =>
  stack.sql("managed-ai", `UPDATE usage_records SET ${sql}, updated_at = now() WHERE id = $1`, [id, ...values]);

describe("the reconciler", () => {
  it("finishes every record whose outcome the ledger knows, and leaves unknown usage to an operator", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "rec", defaultModel: "small" });

    // The reservation's answer was lost (ledger_unavailable) but the hold was taken: void it, failed.
    const lost = await reviewWithOpenHold(c, "rec");
    await setRecord(lost, "error_code = 'ledger_unavailable', hold_id = NULL");
    // The capture failed after usage arrived (settlement_failed): capture the known charge, completed.
    const uncaptured = await reviewWithOpenHold(c, "rec");
    await setRecord(uncaptured, "error_code = 'settlement_failed', usage_json = $2", [
      JSON.stringify({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 }),
    ]);
    // The capture reached the ledger but its answer did not: completed with the ledger's amount.
    const captured = await chat(c, "rec");
    const capturedRecord = await usageRecord(stack, captured.id);
    await setRecord(captured.id, "status = 'review', error_code = 'settlement_failed', final_units = NULL");
    // A process died after its capture, the record still says reserved.
    const orphan = await chat(c, "rec");
    const orphanRecord = await usageRecord(stack, orphan.id);
    await setRecord(orphan.id, "status = 'reserved', error_code = NULL, final_units = NULL, hold_id = NULL, created_at = now() - interval '1 hour'");
    // The provider failed and the void was lost: void, failed.
    const failedVoid = await reviewWithOpenHold(c, "rec");
    await setRecord(failedVoid, "error_code = 'provider_error'");
    // A process died with its hold open and the provider's usage unknown: review for an operator.
    const interrupted = await reviewWithOpenHold(c, "rec");
    await setRecord(interrupted, "status = 'reserved', error_code = NULL, created_at = now() - interval '1 hour'");
    // Usage truly unknown: stays in review.
    const unknown = await reviewWithOpenHold(c, "rec");

    await eventually(
      () => usageRecord(stack, orphan.id),
      (r) => r?.status === "completed",
      30_000,
    );
    const audit = await settledBooks(stack, [c.tenantId], 30_000);
    expect(audit.problems).toEqual([]);
    expect(await usageRecord(stack, lost)).toMatchObject({ status: "failed", error_code: "ledger_unavailable", final_units: "0" });
    expect(await usageRecord(stack, uncaptured)).toMatchObject({ status: "completed", error_code: null, final_units: "26" }); // 12×1 + 7×2 units
    expect(await usageRecord(stack, captured.id)).toMatchObject({ status: "completed", final_units: capturedRecord!.final_units });
    expect(await usageRecord(stack, orphan.id)).toMatchObject({ status: "completed", final_units: orphanRecord!.final_units });
    expect(await usageRecord(stack, failedVoid)).toMatchObject({ status: "failed", error_code: "provider_error" });
    expect(await usageRecord(stack, interrupted)).toMatchObject({ status: "review", error_code: "interrupted" });
    expect(await usageRecord(stack, unknown)).toMatchObject({ status: "review", error_code: "usage_unavailable" });
    expect(audit.waiting).toBe(2);
    const held = BigInt((await usageRecord(stack, interrupted))!.reserved_units) + BigInt((await usageRecord(stack, unknown))!.reserved_units);
    expect(await balance(stack, c)).toEqual({ available_units: 1_000_000 - Number(audit.charged) - Number(held), reserved_units: Number(held) });

    // Each finished record says so in the audit trail, once.
    const events = await eventually(
      () =>
        stack.sql<{ n: string }>(
          "jobs",
          "SELECT count(*)::text AS n FROM audit_events WHERE type = 'managed_ai.request_reconciled' AND data->>'tenant_id' = $1",
          [c.tenantId],
        ),
      (rows) => rows[0]?.n === "6",
      15_000,
    );
    expect(events[0]!.n).toBe("6");
  }, 120_000);

  it("replays the capture of a completed record that a crash left without one (the two are written in parallel), once", async () => {
    const c = await customer(stack, op, { units: 1_000_000, alias: "cap", defaultModel: "small" });
    // The record written completed, the capture never sent: the hold is still open in the ledger.
    const id = await reviewWithOpenHold(c, "cap");
    const before = await balance(stack, c);
    await setRecord(id, "status = 'completed', error_code = NULL, final_units = 26, settled_at = now()");
    const captured = await eventually(
      () => stack.sql<{ units: string }>("ledger", "SELECT units::text AS units FROM transfers WHERE operation_id = $1", [`capture:${id}`]),
      (rows) => rows.length === 1,
      30_000,
    );
    expect(captured[0]!.units).toBe("26");
    const audit = await settledBooks(stack, [c.tenantId], 30_000);
    expect(audit.problems).toEqual([]);
    expect(await usageRecord(stack, id)).toMatchObject({ status: "completed", final_units: "26" });
    const reserved = BigInt((await usageRecord(stack, id))!.reserved_units);
    expect(await balance(stack, c)).toEqual({
      available_units: before.available_units + Number(reserved) - 26,
      reserved_units: before.reserved_units - Number(reserved),
    });
    // Later passes find it captured and move nothing more.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(
      await stack.sql("ledger", "SELECT 1 FROM transfers WHERE hold_id = (SELECT hold_id FROM transfers WHERE operation_id = $1)", [`capture:${id}`]),
    ).toHaveLength(2);
  }, 60_000);

  it("a reservation that never reached the ledger is found so, and nothing is charged", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "ghost", defaultModel: "small" });
    const done = await chat(c, "ghost");
    const before = await balance(stack, c);
    // A record whose reserve:<id> the ledger never saw (the process died before the call).
    await stack.sql(
      "managed-ai",
      `INSERT INTO usage_records (id, tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, status, stream,
         input_tokens_bound, output_tokens_cap, reserved_units, hold_expires_at, created_at, updated_at)
       SELECT 'req_ghost' || substr(md5(random()::text), 1, 12), tenant_id, api_key_id, service_alias, model_alias, price_id, upstream_id, discount_bps, 'reserved', stream,
         input_tokens_bound, output_tokens_cap, reserved_units, now() + interval '1 hour', now() - interval '1 hour', now()
       FROM usage_records WHERE id = $1`,
      [done.id],
    );
    const audit = await settledBooks(stack, [c.tenantId], 30_000);
    expect(audit.problems).toEqual([]);
    expect(audit.byStatus).toEqual({ completed: 1, failed: 1 });
    expect(await balance(stack, c)).toEqual(before);
  }, 60_000);

  it("takes an operator's release reason of exactly 240 characters whole into the ledger (issue 16)", async () => {
    const c = await customer(stack, op, { units: 100_000, alias: "rel", defaultModel: "small" });
    const id = await reviewWithOpenHold(c, "rel");
    const reason = `${"r".repeat(120)} ${"s".repeat(119)}`;
    expect(reason).toHaveLength(240);
    const res = await call(stack.edgeUrl, "POST", `/ops/ai/requests/${id}/release`, { token: op.token, body: { reason } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [entry] = await stack.sql<{ reason: string }>("ledger", "SELECT reason FROM transfers WHERE operation_id = $1", [`void:${id}`]);
    expect(entry?.reason).toBe(reason);
    expect((await call(stack.edgeUrl, "POST", `/ops/ai/requests/${id}/release`, { token: op.token, body: { reason: "x".repeat(241) } })).status).toBe(400);
  });

  it("after the ledger is killed under load and comes back, every record the ledger can tell is final and agrees with it", async () => {
    const c = await customer(stack, op, { units: 50_000_000, alias: "load", defaultModel: "small" });
    let stop = false;
    const statuses: Record<number, number> = {};
    const worker = async (n: number) => {
      while (!stop) {
        const { status } = await chat(c, "load", n % 3 === 0).catch(() => ({ status: 0 }));
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    };
    const workers = Array.from({ length: 8 }, (_, n) => worker(n));
    await new Promise((r) => setTimeout(r, 1_500));
    await stack.stop("ledger", "SIGKILL");
    await new Promise((r) => setTimeout(r, 3_000));
    await stack.start("ledger");
    await new Promise((r) => setTimeout(r, 1_500));
    await stack.stop("managed-ai", "SIGKILL");
    await new Promise((r) => setTimeout(r, 2_000));
    await stack.start("managed-ai");
    await new Promise((r) => setTimeout(r, 1_500));
    stop = true;
    await Promise.all(workers);
    expect(statuses[200] ?? 0).toBeGreaterThan(0);
    expect(statuses[503] ?? 0, JSON.stringify(statuses)).toBeGreaterThan(0); // the faults were felt

    const audit = await settledBooks(stack, [c.tenantId], 60_000);
    expect(audit.problems).toEqual([]);
    // Only records whose provider usage is unknown wait (a process killed mid-call, a stream cut).
    expect(audit.waiting).toBeLessThanOrEqual(audit.byStatus.review ?? 0);
  }, 180_000);
});
