import type { AppError } from "@gateway/errors";
import type { ledger } from "@gateway/protos";
import { captureHold, findHold, type HoldCalls, type HoldReads, type Settlement, voidHold } from "./holds.js";
import { captureOperation, reserveOperation, voidOperation } from "./operations.js";
import { type Reclaimed, reserveReclaiming } from "./reclaim.js";

/**
 * One hold of one record (a usage record, a job, a push message), as its owner
 * describes it once: every movement of it is derived from this (its operation ids
 * from the record's id), so the request's own send, a retry, a recovery after a
 * crash and another replica all send the same movements, and none moves money twice.
 */
export type HoldSpec = {
  /** The record's id: the operation ids are reserve:<id>, capture:<id>, void:<id>. */
  id: string;
  tenantId: string;
  units: bigint;
  /** Fixed when the record is written (replays must send the same): an absolute expiry, or a time to live. */
  expiry: { expiresAt: Date } | { ttlSeconds: number };
  /** The reservation's note (hashed by the ledger: the same in every replay). */
  reason: string;
};

/** A hold as its owner decides on it: none (never reserved), or its state in the ledger. */
export type HoldState = "none" | { status: "open" | "captured" | "voided"; capturedUnits: bigint; releasedUnits: bigint };

/** What an owner's rule decides about an open hold. */
export type HoldDecision = { kind: "capture"; units: bigint; reason: string } | { kind: "void"; reason: string } | { kind: "wait" };

/**
 * How a hold ended up: settled in the ledger (by this call or, as a conflict shows, by
 * another before it: its state says how), never reserved, or left open (waiting).
 */
export type HoldOutcome =
  | { kind: "captured"; holdId: string; capturedUnits: bigint; releasedUnits: bigint }
  | { kind: "voided"; holdId: string; releasedUnits: bigint }
  | { kind: "open"; holdId: string }
  | { kind: "none" };

/**
 * The hold protocol (docs/decisions/0224): open (reserve, decided on everything the
 * tenant has: `reclaim` gives back allotments' unclaimed units before a refusal
 * stands), settle (capture or void; a conflict is answered with what the ledger
 * holds), and recover with the owner's decision rule (the hold found again by
 * replaying its reservation; one that only the replay took was never reserved and is
 * given back). Each service keeps only its rule and its records.
 */
export class HoldProtocol {
  constructor(
    private readonly calls: HoldCalls & HoldReads,
    private readonly reclaim?: (tenantId: string) => Promise<Reclaimed>,
  ) {}

  /** The reservation, the same for the first send and every replay. */
  reserveRequest(spec: HoldSpec): ledger.ReserveRequest {
    return {
      operation_id: reserveOperation(spec.id),
      tenant_id: spec.tenantId,
      units: spec.units.toString(),
      ...("expiresAt" in spec.expiry ? { expires_at: spec.expiry.expiresAt.toISOString() } : { ttl_seconds: spec.expiry.ttlSeconds }),
      reason: spec.reason,
    };
  }

  /** Takes the hold; `insufficient_balance` only once the tenant's allotments had nothing more to give. */
  open(spec: HoldSpec): Promise<ledger.ReserveResponse__Output> {
    const reserve = () => this.calls.reserve(this.reserveRequest(spec));
    const reclaim = this.reclaim;
    return reclaim ? reserveReclaiming(reserve, () => reclaim(spec.tenantId)) : reserve();
  }

  /** capture:<id> of `units` (the rest goes back); a conflict answers the hold as the ledger holds it. */
  capture(id: string, holdId: string, units: bigint, reason: string): Promise<Settlement<ledger.CaptureResponse__Output>> {
    return captureHold(this.calls, { operation_id: captureOperation(id), hold_id: holdId, units: units.toString(), reason });
  }

  /** void:<id>; a conflict answers the hold as the ledger holds it. */
  void(id: string, holdId: string, reason: string): Promise<Settlement<ledger.VoidResponse__Output>> {
    return voidHold(this.calls, { operation_id: voidOperation(id), hold_id: holdId, reason });
  }

  /**
   * The hold of a record whose hold id may be lost (`holdId` null: a crash, an answer
   * that never came), found by replaying its reservation: refused means never
   * reserved; taken only now means the original never reached the ledger, and it is
   * given back (`void:<id>`). Then its state.
   */
  async find(spec: HoldSpec, holdId: string | null): Promise<{ holdId: string; state: HoldState } | { holdId: null; state: "none" }> {
    let id = holdId;
    if (!id) {
      const found = await findHold(this.calls, this.reserveRequest(spec));
      if (!found) return { holdId: null, state: "none" };
      if (!found.replayed) {
        await this.calls.void({ operation_id: voidOperation(spec.id), hold_id: found.holdId, reason: `${spec.reason}: never reserved` });
        return { holdId: null, state: "none" };
      }
      id = found.holdId;
    }
    return { holdId: id, state: stateOf(await this.calls.hold(id)) };
  }

  /**
   * Recovery: the hold's state decides, and an open one is settled as `decide` rules
   * (capture, void, or wait). Every movement replays the record's own operation ids,
   * so two recoveries at once, or a recovery racing the owner's own settlement, move
   * no money twice; a conflict is answered with the state the ledger holds.
   */
  async recover(spec: HoldSpec, holdId: string | null, decide: (state: HoldState) => HoldDecision): Promise<HoldOutcome> {
    const found = await this.find(spec, holdId);
    if (found.holdId === null) return { kind: "none" };
    return this.settle(spec.id, found.holdId, found.state, decide);
  }

  /** Applies `decide` to a hold whose state is known (see `recover`). */
  async settle(id: string, holdId: string, state: HoldState, decide: (state: HoldState) => HoldDecision): Promise<HoldOutcome> {
    const settled = outcomeOf(holdId, state);
    if (settled) return settled;
    const decision = decide(state);
    if (decision.kind === "wait") return { kind: "open", holdId };
    const result = decision.kind === "capture" ? await this.capture(id, holdId, decision.units, decision.reason) : await this.void(id, holdId, decision.reason);
    if (result.kind === "settled") return outcomeOf(holdId, stateOf(result.response.hold)) ?? { kind: "open", holdId };
    const after = outcomeOf(holdId, stateOf(result.hold));
    if (!after) throw result.error as AppError;
    return after;
  }
}

/** A hold as the ledger answers it, as an owner reads it. */
export function stateOf(hold: Pick<ledger.Hold__Output, "status" | "captured_units" | "released_units"> | null | undefined): HoldState {
  if (!hold) return { status: "open", capturedUnits: 0n, releasedUnits: 0n };
  const status = hold.status === "captured" || hold.status === "voided" ? hold.status : "open";
  return { status, capturedUnits: BigInt(hold.captured_units || "0"), releasedUnits: BigInt(hold.released_units || "0") };
}

function outcomeOf(holdId: string, state: HoldState): HoldOutcome | null {
  if (state === "none") return { kind: "none" };
  if (state.status === "captured") return { kind: "captured", holdId, capturedUnits: state.capturedUnits, releasedUnits: state.releasedUnits };
  if (state.status === "voided") return { kind: "voided", holdId, releasedUnits: state.releasedUnits };
  return null;
}
