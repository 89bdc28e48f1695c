export { MAX_BATCH_ITEMS, type AllotmentCharge, type AllotmentReport } from "./allotments.js";
export { movementError } from "./errors.js";
export { captureHold, findHold, NEVER_RESERVED, voidHold, type HoldCalls, type HoldReads, type Settlement } from "./holds.js";
export { LedgerCalls, type LedgerCallsOptions } from "./ledger-calls.js";
export {
  allotOperation,
  captureOperation,
  closeOperation,
  creditOperation,
  freezeOperation,
  postOperation,
  reserveOperation,
  voidOperation,
} from "./operations.js";
export { RECLAIM_ROUNDS, reclaimThrough, reserveReclaiming, type Reclaimed, type ReclaimAllotmentsClient } from "./reclaim.js";
export { HoldProtocol, stateOf, type HoldDecision, type HoldOutcome, type HoldSpec, type HoldState } from "./protocol.js";
