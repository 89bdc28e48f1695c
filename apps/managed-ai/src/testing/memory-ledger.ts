import { AppError } from "@gateway/errors";

/**
 * A ledger kept in memory that behaves like the real one for the calls
 * managed-ai makes (reserve, capture, void, GetHold), balances included:
 * an operation id replays its first result, the same id with other parameters
 * (the reason too: the real ledger hashes it) is a conflict, a settled hold
 * refuses another settlement, a capture gives the rest of the hold back, and a
 * reserve above the available balance is refused. `calls` stands in for
 * LedgerCalls (the hot path), `client` for the gRPC client.
 */
type Hold = { id: string; tenantId: string; units: bigint; status: "open" | "captured" | "voided"; captured: bigint; released: bigint };
type Seen = { fingerprint: string; result: unknown };

export type MemoryLedger = ReturnType<typeof memoryLedger>;

export function memoryLedger() {
  const seen = new Map<string, Seen>();
  const holds = new Map<string, Hold>();
  const accounts = new Map<string, { available: bigint; held: bigint; credited: bigint }>();
  let n = 0;
  const account = (tenantId: string) => {
    let a = accounts.get(tenantId);
    if (!a) {
      a = { available: 0n, held: 0n, credited: 0n };
      accounts.set(tenantId, a);
    }
    return a;
  };
  const view = (h: Hold) => ({ hold_id: h.id, tenant_id: h.tenantId, status: h.status, units: h.units.toString(), captured_units: h.captured.toString(), released_units: h.released.toString() });
  const once = <T>(operationId: string, params: unknown, run: () => T): T & { replayed: boolean } => {
    const fingerprint = JSON.stringify(params);
    const before = seen.get(operationId);
    if (before) {
      if (before.fingerprint !== fingerprint) throw new AppError("conflict", "operation id reused with other parameters");
      return { ...(before.result as T), replayed: true };
    }
    const result = run();
    seen.set(operationId, { fingerprint, result });
    return { ...result, replayed: false };
  };
  const settle = (kind: "capture" | "void", req: { operation_id: string; hold_id: string; units?: string; reason?: string }) =>
    once(req.operation_id, [kind, req.hold_id, req.units ?? null, req.reason ?? ""], () => {
      const hold = holds.get(req.hold_id);
      if (!hold) throw new AppError("not_found", "No such hold.");
      if (hold.status !== "open") throw new AppError("conflict", `The hold is already ${hold.status}.`);
      const units = kind === "capture" ? BigInt(req.units ?? "0") : 0n;
      if (units < 0n || units > hold.units) throw new AppError("invalid_request", "units must be between 0 and the hold's units");
      const a = account(hold.tenantId);
      hold.status = kind === "capture" ? "captured" : "voided";
      hold.captured = units;
      hold.released = hold.units - units;
      a.held -= hold.units;
      a.available += hold.released;
      return { hold: view(hold) };
    });
  const reserve = async (req: { operation_id: string; tenant_id: string; units: string; expires_at?: string; reason?: string }) =>
    once(req.operation_id, ["reserve", req.tenant_id, req.units, req.expires_at ?? "", req.reason ?? ""], () => {
      const a = account(req.tenant_id);
      const units = BigInt(req.units);
      if (a.available < units) throw new AppError("insufficient_balance", "The available balance is too low.");
      const hold: Hold = { id: `hold_${++n}`, tenantId: req.tenant_id, units, status: "open", captured: 0n, released: 0n };
      holds.set(hold.id, hold);
      a.available -= units;
      a.held += units;
      return { hold_id: hold.id };
    });
  const capture = async (req: { operation_id: string; hold_id: string; units: string; reason?: string }) => settle("capture", req);
  const voidHold = async (req: { operation_id: string; hold_id: string; reason?: string }) => settle("void", req);
  const getHold = async (req: { hold_id: string }) => {
    const h = holds.get(req.hold_id);
    if (!h) throw new AppError("not_found", "No such hold.");
    return view(h);
  };
  return {
    calls: { reserve, capture, void: voidHold },
    client: { Reserve: reserve, Capture: capture, Void: voidHold, GetHold: getHold, close() {} },
    holds,
    credit(tenantId: string, units: bigint) {
      const a = account(tenantId);
      a.available += units;
      a.credited += units;
    },
    balance(tenantId: string) {
      const a = account(tenantId);
      return { available: a.available, held: a.held };
    },
    /** The hold a request took (reserve:<id>), if any. */
    holdOf(requestId: string): Hold | undefined {
      const r = seen.get(`reserve:${requestId}`)?.result as { hold_id: string } | undefined;
      return r ? holds.get(r.hold_id) : undefined;
    },
    /** Movements made so far, by operation id (a replay adds none). */
    operations: () => [...seen.keys()],
  };
}
