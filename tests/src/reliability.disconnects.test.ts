import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { createClient } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { startStack, type Stack } from "@gateway/testkit";
import { balance, customer, managedModel, mockProvider, operator, upstream, type Customer, type Operator } from "./support/managed-ai.js";
import { eventually } from "./support/operators.js";
import { LISTENER_LEAK, rawRequest } from "./support/raw-client.js";

/*
 * Issue 10's crash: clients that cut their connection while a metered stream is
 * in flight (at every point: before the answer, after the head, in the middle
 * of the events) must never end a process nor leave a listener behind, and the
 * money of every cut stream must end consistent: completed (usage had arrived)
 * or review (usage unknown) with the hold exactly as the record says.
 */

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let c: Customer;
const CREDIT = 50_000_000;

beforeAll(async () => {
  provider = await mockProvider();
  stack = await startStack({ services: ["ledger", "managed-ai", "jobs"] });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 });
  c = await customer(stack, op, { units: CREDIT, alias: "chat", defaultModel: "small" });
});
afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});

const streamRequest = (key: string, includeUsage: boolean) => ({
  method: "POST",
  path: "/v1/apps/ai/chat/v1/chat/completions",
  headers: { "content-type": "application/json", "x-api-key": key },
  body: JSON.stringify({
    messages: [{ role: "user", content: "Tell me a long story about holds, captures and voids, with many words in it." }],
    stream: true,
    max_tokens: 60,
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  }),
});

/** Where a client cuts: before any answer, within the head, after some events, or never. */
function cutPoint(i: number): { bytes: number; ms?: number } {
  const r = i % 6;
  if (r === 0) return { bytes: 0 };
  if (r === 1) return { bytes: 10 };
  if (r === 2) return { bytes: 400 + ((i * 37) % 300) };
  if (r === 3) return { bytes: 1200 + ((i * 53) % 900) };
  if (r === 4) return { bytes: Infinity, ms: 1 + ((i * 13) % 40) };
  return { bytes: Infinity };
}

describe("clients that disconnect in the middle of streams", () => {
  it("end no process, leave no listener behind, and leave every record and hold consistent", async () => {
    provider.set({ chunkDelayMs: 2 });
    const rounds = 5;
    const concurrency = 32;
    let completedStreams = 0;
    for (let round = 0; round < rounds; round++) {
      const outcomes = await Promise.all(
        Array.from({ length: concurrency * 2 }, (_, i) => {
          const point = cutPoint(i + round);
          return rawRequest(stack.edgeUrl, streamRequest(c.key, i % 2 === 0), point.bytes, point.ms !== undefined ? { cutAfterMs: point.ms } : {});
        }),
      );
      completedStreams += outcomes.filter((o) => o.completed && o.text.includes("data: [DONE]")).length;
      expect(stack.process("managed-ai").running, stack.process("managed-ai").tail()).toBe(true);
      expect(stack.process("edge").running, stack.process("edge").tail()).toBe(true);
    }
    expect(completedStreams).toBeGreaterThan(0);
    provider.set({ chunkDelayMs: undefined });

    // The next customer request is served as usual.
    const next = await rawRequest(stack.edgeUrl, streamRequest(c.key, true), Infinity);
    expect(next.status, `${next.text}\n${stack.process("managed-ai").tail(40)}`).toBe(200);
    expect(next.text).toContain("data: [DONE]");

    // Every record settles: completed (usage came), review (usage unknown); nothing left reserved.
    const records = await eventually(
      () =>
        stack.sql<{ id: string; status: string; error_code: string | null; reserved_units: string; final_units: string | null; hold_id: string | null }>(
          "managed-ai",
          "SELECT id, status, error_code, reserved_units::text, final_units::text, hold_id FROM usage_records WHERE tenant_id = $1",
          [c.tenantId],
        ),
      (rows) => rows.length > 0 && rows.every((r) => r.status !== "reserved"),
      30_000,
    );
    for (const r of records) expect(["completed", "review"], JSON.stringify(r)).toContain(r.status);

    // The ledger agrees with each record, and the balance with their sum.
    const ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 5_000, serviceToken: stack.serviceToken, tls: stack.tls });
    try {
      let charged = 0n;
      let held = 0n;
      for (const r of records) {
        if (r.status === "completed" && !r.hold_id) {
          // Spent from the tenant's allotment (docs/decisions/0028): its charge is its own posted transfer.
          const posted = await eventually(
            () => stack.sql<{ units: string }>("ledger", "SELECT units::text FROM transfers WHERE operation_id = $1", [`post:${r.id}`]),
            (rows) => rows.length === 1,
            5_000,
          );
          expect(posted[0]!.units, JSON.stringify(r)).toBe(r.final_units);
          charged += BigInt(r.final_units!);
          continue;
        }
        expect(r.hold_id, JSON.stringify(r)).toBeTruthy();
        const hold = await ledger.GetHold({ hold_id: r.hold_id! });
        if (r.status === "completed") {
          expect(hold.status).toBe("captured");
          expect(hold.captured_units).toBe(r.final_units);
          charged += BigInt(r.final_units!);
        } else {
          expect(hold.status).toBe("open");
          expect(hold.units).toBe(r.reserved_units);
          held += BigInt(r.reserved_units);
        }
      }
      expect(await balance(stack, c)).toEqual({ available_units: CREDIT - Number(charged) - Number(held), reserved_units: Number(held) });
      expect((await ledger.CheckInvariant({ tenant_id: c.tenantId })).ok).toBe(true);
    } finally {
      ledger.close();
    }

    // Nothing went uncaught and no emitter collected listeners per request, in any process.
    for (const name of ["edge", "managed-ai", "ledger"] as const) {
      expect(stack.process(name).running, name).toBe(true);
      const fatal = stack.logs(name).filter((l) => l.level === "fatal" || /uncaught|unhandled/i.test(String(l.msg ?? l.raw ?? "")));
      expect(fatal, name).toEqual([]);
      const leaks = stack.logs(name).filter((l) => LISTENER_LEAK.test(JSON.stringify(l)));
      expect(leaks, name).toEqual([]);
    }
  }, 240_000);
});
