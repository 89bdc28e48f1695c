import { GroupCommit } from "@gateway/db-kit";
import { AppError } from "@gateway/errors";
import { isUnimplemented, type Client } from "@gateway/grpc-kit";
import { currentRequestId, type Logger } from "@gateway/logger";
import type { ledger, ledgerV1 } from "@gateway/protos";
import { activeContext, withContext, type Context } from "@gateway/telemetry";
import { movementError } from "./errors.js";
import type { HoldCalls } from "./holds.js";

type Movement = ledger.Movement;
type Result = ledger.MovementResult__Output;
/** A movement with the trace context of the request that asked for it. */
type Pending = { movement: Movement; caller: Context };

/** The one result of a one-item ApplyBatch, or its error as an AppError. */
const single =
  <K extends "released">(key: K) =>
  (res: ledger.ApplyBatchResponse__Output): NonNullable<Result[K]> => {
    const r = res.results[0];
    if (r?.error) throw movementError(r.error);
    if (!r?.[key]) throw new AppError("internal_error", "the ledger answered a movement without its result");
    return r[key]!;
  };

/**
 * Movements sent to the ledger (reserve, capture, void, release), pipelined: a
 * call is sent at once when no call is under way; calls that arrive while one is
 * go together as one ApplyBatch — one message each way
 * instead of one call per request. Every item keeps its own outcome: the
 * response its single call would give, or the AppError it would fail with. A
 * failure of the batch call itself (the ledger unreachable, the deadline)
 * fails its items with that error, as single calls would fail.
 *
 * A ledger without ApplyBatch (an older build during a rolling deploy) is
 * called one movement at a time instead.
 *
 * With tracing on, a batch's call is made in the trace context of its first
 * movement's request (not whichever request happened to free the slot).
 */
export class LedgerCalls implements HoldCalls {
  private readonly batches: GroupCommit<Pending, Result>;
  private batching = true;

  constructor(
    private readonly ledger: Client<typeof ledgerV1>,
    private readonly logger: Logger,
    options: { maxBatch?: number; concurrency?: number; onBatch?: (size: number) => void } = {},
  ) {
    this.batches = new GroupCommit({
      ...(options.onBatch ? { onBatch: options.onBatch } : {}),
      maxBatch: options.maxBatch ?? 200,
      concurrency: options.concurrency ?? 1,
      isolateFailures: false,
      run: async (items) => (await withContext(items[0]!.caller, () => this.ledger.ApplyBatch({ items: items.map((i) => i.movement) }))).results,
    });
  }

  async reserve(request: ledger.ReserveRequest): Promise<ledger.ReserveResponse__Output> {
    return (await this.apply({ reserve: request }, async () => ({ reserved: await this.ledger.Reserve(request) }))).reserved!;
  }

  async capture(request: ledger.CaptureRequest): Promise<ledger.CaptureResponse__Output> {
    return (await this.apply({ capture: request }, async () => ({ captured: await this.ledger.Capture(request) }))).captured!;
  }

  async void(request: ledger.VoidRequest): Promise<ledger.VoidResponse__Output> {
    return (await this.apply({ void: request }, async () => ({ voided: await this.ledger.Void(request) }))).voided!;
  }

  /** Gives part of an open allotment back to available (docs/decisions/0028). */
  async release(request: ledger.ReleaseRequest): Promise<ledger.ReleaseResponse__Output> {
    return (
      await this.apply({ release: request }, async () => ({
        released: await this.ledger.ApplyBatch({ items: [{ release: request }] }).then(single("released")),
      }))
    ).released!;
  }

  /** The movement's result; its error as an AppError. `single` calls the ledger without ApplyBatch. */
  private async apply(movement: Movement, single: () => Promise<Partial<Result>>): Promise<Partial<Result>> {
    if (!this.batching) return single();
    let result: Result;
    try {
      result = await this.batches.submit({ movement: { ...movement, request_id: currentRequestId() ?? "" }, caller: activeContext() });
    } catch (err) {
      if (!isUnimplemented(err)) throw err;
      if (this.batching) this.logger.warn("the ledger does not offer ApplyBatch; calling it one movement at a time");
      this.batching = false;
      return single();
    }
    if (result.error) throw movementError(result.error);
    return result;
  }
}
