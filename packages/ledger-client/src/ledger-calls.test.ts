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
});
