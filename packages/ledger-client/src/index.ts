export { movementError } from "./errors.js";
export { captureHold, directCalls, findHold, NEVER_RESERVED, voidHold, type HoldCalls, type HoldReads, type Settlement } from "./holds.js";
export { LedgerCalls } from "./ledger-calls.js";
export { captureOperation, reserveOperation, voidOperation } from "./operations.js";
