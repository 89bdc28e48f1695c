import { inSpan } from "@gateway/telemetry";
import { recordSpans } from "@gateway/telemetry/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { poolMovements, type MovementQueue, type MovementRow, type QueuedMovement } from "./movement-queue.js";

let recorder: Awaited<ReturnType<typeof recordSpans>>;
beforeAll(async () => (recorder = await recordSpans("ledger")));
afterAll(() => recorder.stop());

function movement(i: number): QueuedMovement {
  return {
    kind: "void",
    operationId: `void:hold_${i}`,
    hash: "h",
    holdId: `hold_${i}`,
    units: null,
    reason: "r",
    transferId: `tr_${i}`,
    eventId: `evt_${i}`,
    requestId: null,
  };
}

it("a batch runs in one span: child of its first movement's call, linked to the others', with the batch size", async () => {
  const statements: number[] = [];
  const pool = {
    async query({ values }: { text: string; values: unknown[]; name?: string }) {
      const n = (values[0] as unknown[]).length;
      statements.push(n);
      await new Promise((r) => setTimeout(r, 20));
      return { rows: Array.from({ length: n }, (_, i) => ({ idx: i + 1, outcome: "ok" }) as unknown as MovementRow) };
    },
  };
  const queue: MovementQueue = poolMovements(pool, { kick: () => undefined }, { concurrency: 1 });
  const callers: { traceId: string; spanId: string }[] = [];
  await Promise.all(
    [1, 2, 3].map((i) =>
      inSpan(`caller ${i}`, {}, async (span) => {
        callers.push(span.spanContext());
        await queue.run(movement(i));
      }),
    ),
  );
  expect(statements).toEqual([1, 2]);
  const batches = recorder.spans().filter((s) => s.name === "ledger_apply");
  expect(batches.map((b) => b.attributes["ledger.batch.size"])).toEqual([1, 2]);
  const [first, second] = batches;
  expect(first!.parentSpanContext?.spanId).toBe(callers[0]!.spanId);
  expect(second!.spanContext().traceId).toBe(callers[1]!.traceId);
  expect(second!.parentSpanContext?.spanId).toBe(callers[1]!.spanId);
  expect(second!.links.map((l) => l.context.spanId)).toEqual([callers[2]!.spanId]);
  expect(second!.attributes["db.system.name"]).toBe("postgresql");
});
