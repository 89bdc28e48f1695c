/** The console balance answers with the ledger's balance schema, the one the operators' view extends. */
export { BalanceResponse } from "../ops/ledger/ledger.types.js";
