import { describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import type { ledger } from "@gateway/protos";
import { movementError } from "./errors.js";
import { captureHold, findHold, voidHold, type HoldCalls, type HoldReads } from "./holds.js";
import { allotOperation, captureOperation, closeOperation, freezeOperation, postOperation, reserveOperation, voidOperation } from "./operations.js";

type Hold = { id: string; units: bigint; status: "open" | "captured" | "voided"; captured: bigint; released: bigint };

/**
 * A ledger in memory for the calls the helpers make: an operation id replays its
 * first answer, the same id with other parameters is a conflict, a settled hold
 * refuses another settlement, a reserve above `available` is refused.
 */
function fakeLedger(available = 100n) {
  const seen = new Map<string, { fingerprint: string; answer: unknown }>();
  const holds = new Map<string, Hold>();
  const sent: string[] = [];
  let n = 0;
  const view = (h: Hold): ledger.Hold__Output =>
    ({
      hold_id: h.id,
      status: h.status,
      units: h.units.toString(),
      captured_units: h.captured.toString(),
      released_units: h.released.toString(),
    }) as ledger.Hold__Output;
  const once = <T>(operationId: string, request: unknown, run: () => T): T & { replayed: boolean } => {
    sent.push(operationId);
    const fingerprint = JSON.stringify(request);
    const before = seen.get(operationId);
    if (before) {
      if (before.fingerprint !== fingerprint) throw new AppError("conflict", "operation id reused with other parameters");
      return { ...(before.answer as T), replayed: true };
    }
    const answer = run();
    seen.set(operationId, { fingerprint, answer });
    return { ...answer, replayed: false };
  };
  const settled = (holdId: string) => {
    const h = holds.get(holdId);
    if (!h) throw new AppError("not_found", "No such hold.");
    if (h.status !== "open") throw new AppError("conflict", "The hold is settled.");
    return h;
  };
  const calls: HoldCalls = {
    async reserve(req) {
      return once(req.operation_id!, req, () => {
        const units = BigInt(String(req.units));
        if (units > available) throw new AppError("insufficient_balance", "no money");
        available -= units;
        const hold: Hold = { id: `hold_${++n}`, units, status: "open", captured: 0n, released: 0n };
        holds.set(hold.id, hold);
        return { hold_id: hold.id } as ledger.ReserveResponse__Output;
      });
    },
    async capture(req) {
      return once(req.operation_id!, req, () => {
        const h = settled(req.hold_id!);
        h.status = "captured";
        h.captured = BigInt(String(req.units));
        h.released = h.units - h.captured;
        return { hold: view(h) } as ledger.CaptureResponse__Output;
      });
    },
    async void(req) {
      return once(req.operation_id!, req, () => {
        const h = settled(req.hold_id!);
        h.status = "voided";
        h.released = h.units;
        return { hold: view(h) } as ledger.VoidResponse__Output;
      });
    },
  };
  const reads: HoldReads = {
    async hold(holdId) {
      const h = holds.get(holdId);
      if (!h) throw new AppError("not_found", "No such hold.");
      return view(h);
    },
  };
  return { calls, reads, ledger: { ...calls, ...reads }, holds, sent };
}

const reserveOf = (id: string, units = "10") => ({
  operation_id: reserveOperation(id),
  tenant_id: "ten_a",
  units,
  expires_at: "2030-01-01T00:00:00.000Z",
  reason: `test ${id}`,
});

describe("operation ids", () => {
  it("keep the format the ledger has seen: <verb>:<record id>", () => {
    expect([reserveOperation("req_1"), captureOperation("job_1"), voidOperation("push_1")]).toEqual(["reserve:req_1", "capture:job_1", "void:push_1"]);
    expect([allotOperation("alt_1"), freezeOperation("alt_1"), closeOperation("alt_1"), postOperation("req_1")]).toEqual([
      "allot:alt_1",
      "freeze:alt_1",
      "close:alt_1",
      "post:req_1",
    ]);
  });
});

describe("findHold", () => {
  it("finds the original hold by replaying its reserve", async () => {
    const l = fakeLedger();
    const first = await l.calls.reserve(reserveOf("a"));
    expect(await findHold(l.calls, reserveOf("a"))).toEqual({ holdId: first.hold_id, replayed: true });
    expect(l.holds.size).toBe(1);
  });

  it("says when the replay took the hold only now (the original never reached the ledger)", async () => {
    const l = fakeLedger();
    expect(await findHold(l.calls, reserveOf("b"))).toEqual({ holdId: "hold_1", replayed: false });
  });

  it("answers none for a reserve the ledger refuses, and throws anything else", async () => {
    const l = fakeLedger(5n);
    expect(await findHold(l.calls, reserveOf("c"))).toBeNull();
    expect(await findHold(l.calls, reserveOf("c"), ["insufficient_balance"])).toBeNull();
    const down: HoldCalls = { ...l.calls, reserve: () => Promise.reject(new AppError("unavailable", "down")) };
    await expect(findHold(down, reserveOf("c"))).rejects.toMatchObject({ code: "unavailable" });
    const invalid: HoldCalls = { ...l.calls, reserve: () => Promise.reject(new AppError("invalid_request", "expired")) };
    expect(await findHold(invalid, reserveOf("c"))).toBeNull();
    await expect(findHold(invalid, reserveOf("c"), ["insufficient_balance"])).rejects.toMatchObject({ code: "invalid_request" });
  });
});

describe("captureHold and voidHold", () => {
  it("settle an open hold and answer the ledger's response", async () => {
    const l = fakeLedger();
    const a = await l.calls.reserve(reserveOf("a"));
    const captured = await captureHold(l.ledger, { operation_id: captureOperation("a"), hold_id: a.hold_id, units: "4", reason: "r" });
    expect(captured).toMatchObject({ kind: "settled", response: { hold: { status: "captured", captured_units: "4", released_units: "6" } } });
    const b = await l.calls.reserve(reserveOf("b"));
    expect(await voidHold(l.ledger, { operation_id: voidOperation("b"), hold_id: b.hold_id, reason: "r" })).toMatchObject({
      kind: "settled",
      response: { hold: { status: "voided", released_units: "10" } },
    });
  });

  it("replay a settlement sent before with the same parameters", async () => {
    const l = fakeLedger();
    const a = await l.calls.reserve(reserveOf("a"));
    const req = { operation_id: voidOperation("a"), hold_id: a.hold_id, reason: "r" };
    await voidHold(l.ledger, req);
    expect(await voidHold(l.ledger, req)).toMatchObject({ kind: "settled", response: { replayed: true } });
  });

  it("answer a conflict with the hold as the ledger holds it (settled otherwise, or other parameters)", async () => {
    const l = fakeLedger();
    const a = await l.calls.reserve(reserveOf("a"));
    await l.calls.capture({ operation_id: captureOperation("a"), hold_id: a.hold_id, units: "3", reason: "by the request" });
    const voided = await voidHold(l.ledger, { operation_id: voidOperation("a"), hold_id: a.hold_id, reason: "by an operator" });
    expect(voided).toMatchObject({ kind: "conflict", hold: { status: "captured", captured_units: "3" }, error: { code: "conflict" } });
    const again = await captureHold(l.ledger, { operation_id: captureOperation("a"), hold_id: a.hold_id, units: "3", reason: "another reason" });
    expect(again).toMatchObject({ kind: "conflict", hold: { status: "captured" } });
  });

  it("throw what is not a conflict", async () => {
    const l = fakeLedger();
    await expect(voidHold(l.ledger, { operation_id: voidOperation("x"), hold_id: "hold_none", reason: "r" })).rejects.toMatchObject({
      code: "not_found",
    });
  });
});

describe("movementError", () => {
  it("keeps the ledger's code when it is an AppError code, else internal_error, with the message", () => {
    const known = movementError({ code: "insufficient_balance", message: "no money" });
    expect(known).toBeInstanceOf(AppError);
    expect(known).toMatchObject({ code: "insufficient_balance", message: "no money" });
    expect(movementError({ code: "teapot", message: "short and stout" })).toMatchObject({ code: "internal_error", message: "short and stout" });
  });
});
