import { describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import type { Client } from "@gateway/grpc-kit";
import { createLogger, runWithContext } from "@gateway/logger";
import type { ledger, ledgerV1 } from "@gateway/protos";
import { LedgerCalls } from "./ledger-calls.js";

/** gRPC status codes (the transport's, as grpc-js reports them in an error's cause). */
const UNIMPLEMENTED = 12;
const UNAVAILABLE = 14;

const logger = createLogger({ service: "ledger-client-test", level: "silent" });
const tick = () => new Promise((r) => setTimeout(r, 5));
const reserved = (units: string): ledger.ReserveResponse__Output => ({
  hold_id: `hold_${units}`,
  balance: null,
  replayed: false,
  entry_id: "trf_1",
  units,
  expires_at: "",
});

/** A ledger that answers ApplyBatch item by item (reserve of 13 units is refused), and records its calls. */
function fakeLedger(options: { applyBatch?: "ok" | "unimplemented" | "down" } = {}) {
  const batches: ledger.Movement[][] = [];
  const singles: string[] = [];
  const fail = (code: number, details: string) =>
    Promise.reject(new AppError(code === UNAVAILABLE ? "unavailable" : "internal_error", details, { cause: { code, details } }));
  const client = {
    async ApplyBatch(req: ledger.ApplyBatchRequest): Promise<ledger.ApplyBatchResponse__Output> {
      await tick();
      if (options.applyBatch === "unimplemented") return fail(UNIMPLEMENTED, "unknown method");
      if (options.applyBatch === "down") return fail(UNAVAILABLE, "ledger is unavailable");
      batches.push(req.items ?? []);
      return {
        results: (req.items ?? []).map((item) => {
          if (item.reserve && item.reserve.units === "13") return { result: "error" as const, error: { code: "insufficient_balance", message: "no money" } };
          if (item.reserve) return { result: "reserved" as const, reserved: reserved(String(item.reserve.units)) };
          return { result: "error" as const, error: { code: "not_found", message: "No such hold." } };
        }),
      };
    },
    async Reserve(req: ledger.ReserveRequest) {
      singles.push(`reserve ${req.units}`);
      return reserved(String(req.units));
    },
    async Capture(req: ledger.CaptureRequest) {
      singles.push(`capture ${req.operation_id}`);
      return {} as ledger.CaptureResponse__Output;
    },
    async Void(req: ledger.VoidRequest) {
      singles.push(`void ${req.operation_id}`);
      return {} as ledger.VoidResponse__Output;
    },
  };
  return { client: client as unknown as Client<typeof ledgerV1>, batches, singles };
}

const reserve = (calls: LedgerCalls, units: string, requestId = `req_${units}`) =>
  runWithContext({ requestId }, () => calls.reserve({ operation_id: `reserve:${requestId}`, tenant_id: "t", units, ttl_seconds: 60 }));

describe("LedgerCalls", () => {
  it("sends the first call at once and what arrives meanwhile as one batch, each item with its request id", async () => {
    const { client, batches } = fakeLedger();
    const calls = new LedgerCalls(client, logger, { concurrency: 1 });
    const answers = await Promise.all(["1", "2", "3", "4"].map((u) => reserve(calls, u)));
    expect(answers.map((a) => a.units)).toEqual(["1", "2", "3", "4"]);
    expect(batches.map((b) => b.length)).toEqual([1, 3]);
    expect(batches[1]!.map((m) => m.request_id)).toEqual(["req_2", "req_3", "req_4"]);
  });

  it("turns an item's error into that call's AppError and leaves the others alone", async () => {
    const { client } = fakeLedger();
    const calls = new LedgerCalls(client, logger, { concurrency: 1 });
    const settled = await Promise.allSettled([reserve(calls, "12"), reserve(calls, "13"), reserve(calls, "14")]);
    expect(settled[0]).toMatchObject({ status: "fulfilled", value: { units: "12" } });
    expect(settled[1]).toMatchObject({ status: "rejected", reason: { code: "insufficient_balance", message: "no money" } });
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(AppError);
    expect(settled[2]).toMatchObject({ status: "fulfilled", value: { units: "14" } });
    await expect(calls.capture({ operation_id: "c", hold_id: "hold_x", units: "1" })).rejects.toMatchObject({ code: "not_found" });
  });

  it("fails every waiting call as unavailable when the ledger cannot be reached, without retrying each", async () => {
    const { client, singles } = fakeLedger({ applyBatch: "down" });
    const calls = new LedgerCalls(client, logger, { concurrency: 1 });
    const settled = await Promise.allSettled(["1", "2", "3"].map((u) => reserve(calls, u)));
    expect(settled.map((s) => s.status === "rejected" && (s.reason as AppError).code)).toEqual(["unavailable", "unavailable", "unavailable"]);
    expect(singles).toEqual([]);
  });

  it("calls one movement at a time a ledger without ApplyBatch (an older build)", async () => {
    const { client, singles } = fakeLedger({ applyBatch: "unimplemented" });
    const calls = new LedgerCalls(client, logger, { concurrency: 1 });
    expect((await reserve(calls, "5")).units).toBe("5");
    expect((await reserve(calls, "6")).units).toBe("6");
    expect(singles).toEqual(["reserve 5", "reserve 6"]);
  });

  it("sends each movement as its own call with batching off", async () => {
    const { client, batches, singles } = fakeLedger();
    const calls = new LedgerCalls(client, logger, { batching: false });
    await Promise.all(["7", "8"].map((u) => reserve(calls, u)));
    await calls.capture({ operation_id: "capture:req_7", hold_id: "hold_7", units: "1" });
    await calls.void({ operation_id: "void:req_8", hold_id: "hold_8" });
    expect(singles).toEqual(["reserve 7", "reserve 8", "capture capture:req_7", "void void:req_8"]);
    expect(batches).toEqual([]);
  });
});

/** A ledger with one hold, hold_1, and one post, post:req_1; ApplyBatch refuses a post of 13 units. */
function readsLedger(options: { down?: boolean } = {}) {
  const sent: ledger.ApplyBatchRequest[] = [];
  const hold = { hold_id: "hold_1", status: "open", units: "100", captured_units: "7" } as ledger.Hold__Output;
  const client = {
    async GetHold(req: ledger.GetHoldRequest) {
      if (req.hold_id !== "hold_1") throw new AppError("not_found", "No such hold.");
      return hold;
    },
    async GetHolds(req: ledger.GetHoldsRequest) {
      return { holds: (req.hold_ids ?? []).filter((id) => id === "hold_1").map(() => hold) };
    },
    async GetTransfers(req: ledger.GetTransfersRequest) {
      return {
        transfers: (req.operation_ids ?? [])
          .filter((id) => id === "post:req_1")
          .map((id) => ({ operation_id: id, kind: "post", units: "7", hold_id: "hold_1" })),
      };
    },
    async ApplyBatch(req: ledger.ApplyBatchRequest): Promise<ledger.ApplyBatchResponse__Output> {
      if (options.down) throw new AppError("unavailable", "ledger is unavailable");
      sent.push(req);
      return {
        results: (req.items ?? []).map((item) =>
          item.post?.units === "13"
            ? { result: "error" as const, error: { code: "invalid_request", message: "units exceed what is left of the hold" } }
            : { result: "posted" as const, posted: { hold: hold, balance: null, replayed: false } as unknown as ledger.PostResponse__Output },
        ),
      };
    },
  };
  return { client: client as unknown as Client<typeof ledgerV1>, sent };
}

describe("LedgerCalls reads", () => {
  it("reads a hold, several holds and transfers by operation id", async () => {
    const calls = new LedgerCalls(readsLedger().client, logger);
    expect(await calls.hold("hold_1")).toMatchObject({ hold_id: "hold_1", status: "open" });
    await expect(calls.hold("hold_2")).rejects.toMatchObject({ code: "not_found" });
    expect((await calls.holds(["hold_1", "hold_2"])).map((h) => h.hold_id)).toEqual(["hold_1"]);
    expect(await calls.transfers(["post:req_1", "post:req_2"])).toEqual([{ operation_id: "post:req_1", kind: "post", units: "7", hold_id: "hold_1" }]);
  });
});

describe("LedgerCalls.postCharges", () => {
  it("posts the charges and reports as one ApplyBatch, each charge under its request's operation id and request id", async () => {
    const { client, sent } = readsLedger();
    const calls = new LedgerCalls(client, logger);
    const outcomes = await runWithContext({ requestId: "req_flush" }, () =>
      calls.postCharges(
        [
          { requestId: "req_1", holdId: "hold_1", units: 7n },
          { requestId: "req_2", holdId: "hold_1", units: "13" },
        ],
        [{ holdId: "hold_1", claimedUnits: 40n, version: 3n }],
      ),
    );
    expect(sent).toEqual([
      {
        items: [
          { post: { operation_id: "post:req_1", hold_id: "hold_1", units: "7", reason: "managed request req_1" }, request_id: "req_1" },
          { post: { operation_id: "post:req_2", hold_id: "hold_1", units: "13", reason: "managed request req_2" }, request_id: "req_2" },
        ],
        reports: [{ hold_id: "hold_1", claimed_units: "40", version: "3" }],
      },
    ]);
    expect(outcomes[0]).toBeNull();
    expect(outcomes[1]).toBeInstanceOf(AppError);
    expect(outcomes[1]).toMatchObject({ code: "invalid_request", message: "units exceed what is left of the hold" });
  });

  it("sends reports alone, and throws a failure of the call itself", async () => {
    const { client, sent } = readsLedger();
    expect(await new LedgerCalls(client, logger).postCharges([], [{ holdId: "hold_1", claimedUnits: "0", version: "9" }])).toEqual([]);
    expect(sent).toEqual([{ items: [], reports: [{ hold_id: "hold_1", claimed_units: "0", version: "9" }] }]);
    const down = new LedgerCalls(readsLedger({ down: true }).client, logger);
    await expect(down.postCharges([{ requestId: "req_3", holdId: "hold_1", units: 1n }])).rejects.toMatchObject({ code: "unavailable" });
  });
});
