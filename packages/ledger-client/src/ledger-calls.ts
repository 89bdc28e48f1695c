import { GroupCommit } from "@gateway/db-kit";
import { AppError } from "@gateway/errors";
import { isUnimplemented, type Client } from "@gateway/grpc-kit";
import { currentRequestId, type Logger } from "@gateway/logger";
import type { ledger, ledgerV1 } from "@gateway/protos";
import { activeContext, withContext, type Context } from "@gateway/telemetry";
import { postMovement, reportOf, type AllotmentCharge, type AllotmentReport } from "./allotments.js";
import { movementError } from "./errors.js";
import type { HoldCalls, HoldReads } from "./holds.js";

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

export type LedgerCallsOptions = {
  /** False: every movement is its own gRPC call (callers with few movements: jobs, messaging). */
  batching?: boolean;
  maxBatch?: number;
  concurrency?: number;
  onBatch?: (size: number) => void;
};

/**
 * A service's one door to the ledger, over the gRPC client its start-up made
 * (which keeps the channel, the deadline and the service token, and is closed
 * there).
 *
 * Movements (reserve, capture, void, release) are pipelined: a call is sent at
 * once when no call is under way; calls that arrive while one is go together as
 * one ApplyBatch — one message each way instead of one call per request. Every
 * item keeps its own outcome: the response its single call would give, or the
 * AppError it would fail with. A failure of the batch call itself (the ledger
 * unreachable, the deadline) fails its items with that error, as single calls
 * would fail. With `batching: false` each movement is its single call.
 *
 * A ledger without ApplyBatch (an older build during a rolling deploy) is
 * called one movement at a time instead.
 *
 * With tracing on, a batch's call is made in the trace context of its first
 * movement's request (not whichever request happened to free the slot).
 *
 * Reads (a hold, holds, transfers by operation id) and the posting of
 * allotment charges are single calls, outside the pipeline.
 */
export class LedgerCalls implements HoldCalls, HoldReads {
  private readonly batches: GroupCommit<Pending, Result>;
  private batching: boolean;

  constructor(
    private readonly ledger: Client<typeof ledgerV1>,
    private readonly logger: Logger,
    options: LedgerCallsOptions = {},
  ) {
    this.batching = options.batching ?? true;
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

  /** A hold as the ledger holds it now (`not_found` when there is none). */
  hold(holdId: string): Promise<ledger.Hold__Output> {
    return this.ledger.GetHold({ hold_id: holdId });
  }

  /** The holds of these ids that exist (1 to 1,000 ids). */
  async holds(holdIds: string[]): Promise<ledger.Hold__Output[]> {
    return (await this.ledger.GetHolds({ hold_ids: holdIds })).holds;
  }

  /** The transfers these operations made, for those that exist. */
  async transfers(operationIds: string[]): Promise<ledger.TransferOf__Output[]> {
    return (await this.ledger.GetTransfers({ operation_ids: operationIds })).transfers;
  }

  /**
   * Posts allotment charges (each its own transfer, post:<request id>, drawn from
   * its allotment's hold; a replay of one that landed changes nothing) with
   * reports of what allotments have claimed, as one ApplyBatch (at most
   * `MAX_BATCH_ITEMS` of each), sent at once. Answers, charge by charge, the
   * ledger's refusal as an AppError, or null when it is posted; a failure of the
   * call itself is thrown.
   */
  async postCharges(charges: AllotmentCharge[], reports: AllotmentReport[] = []): Promise<(AppError | null)[]> {
    const { results } = await this.ledger.ApplyBatch({ items: charges.map(postMovement), reports: reports.map(reportOf) });
    return results.map((r) => (r.error ? movementError(r.error) : null));
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
