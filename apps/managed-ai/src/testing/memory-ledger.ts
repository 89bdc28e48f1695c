import { AppError } from "@gateway/errors";
import type { Client } from "@gateway/grpc-kit";
import { LedgerCalls } from "@gateway/ledger-client";
import { createLogger } from "@gateway/logger";
import type { ledgerV1 } from "@gateway/protos";

/**
 * A ledger kept in memory that behaves like the real one for the calls
 * managed-ai makes (reserve, capture, void, GetHold), balances included:
 * an operation id replays its first result, the same id with other parameters
 * (the reason too: the real ledger hashes it) is a conflict, a settled hold
 * refuses another settlement, a capture gives the rest of the hold back, and a
 * reserve above the available balance is refused. `client` stands in for the
 * gRPC client, and `calls` is the package's LedgerCalls over it, each movement
 * its own call (what managed-ai's context gets).
 */
type Hold = {
  id: string;
  tenantId: string;
  units: bigint;
  status: "open" | "captured" | "voided";
  captured: bigint;
  released: bigint;
  /** An allotment (docs/decisions/0028): drawn by posts (captured) and releases (released) while open. */
  allotment: boolean;
};
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
  const view = (h: Hold) => ({
    hold_id: h.id,
    tenant_id: h.tenantId,
    status: h.status,
    units: h.units.toString(),
    captured_units: h.captured.toString(),
    released_units: h.released.toString(),
    allotment: h.allotment,
  });
  const balanceOf = (tenantId: string) => {
    const a = account(tenantId);
    return { tenant_id: tenantId, currency: "USD", available_units: a.available.toString(), reserved_units: a.held.toString() };
  };
  const reports = new Map<string, { claimed: bigint; version: bigint }>();
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
      if (hold.allotment && kind === "capture") throw new AppError("invalid_request", "an allotment is settled by posts and a void");
      const left = hold.units - hold.captured - hold.released;
      const units = kind === "capture" ? BigInt(req.units ?? "0") : 0n;
      if (units < 0n || units > hold.units) throw new AppError("invalid_request", "units must be between 0 and the hold's units");
      const a = account(hold.tenantId);
      hold.status = kind === "capture" ? "captured" : "voided";
      hold.captured += units;
      hold.released += left - units;
      a.held -= left;
      a.available += left - units;
      return { hold: view(hold), balance: balanceOf(hold.tenantId) };
    });
  type ReserveReq = {
    operation_id: string;
    tenant_id: string;
    units: string;
    expires_at?: string;
    ttl_seconds?: number;
    reason?: string;
    allotment?: boolean;
    from_hold_id?: string;
    from_units?: string;
  };
  const reserve = async (req: ReserveReq) =>
    once(
      req.operation_id,
      [
        "reserve",
        req.tenant_id,
        req.units,
        req.expires_at ?? "",
        req.ttl_seconds ?? 0,
        req.reason ?? "",
        !!req.allotment,
        req.from_hold_id ?? "",
        req.from_units ?? "0",
      ],
      () => {
        const a = account(req.tenant_id);
        const units = BigInt(req.units);
        const fromUnits = BigInt(req.from_units || "0");
        const from = req.from_hold_id ? holds.get(req.from_hold_id) : undefined;
        if (req.from_hold_id) {
          if (!from) throw new AppError("not_found", "No such hold.");
          if (!from.allotment || from.tenantId !== req.tenant_id) throw new AppError("invalid_request", "from_hold_id is not an allotment of this tenant");
          if (from.status !== "open") throw new AppError("conflict", `The hold is already ${from.status}.`);
          if (fromUnits <= 0n || fromUnits > from.units - from.captured - from.released)
            throw new AppError("invalid_request", "from_units exceed what is left of the allotment");
        }
        if (a.available + fromUnits < units) throw new AppError("insufficient_balance", "The available balance is too low.");
        if (from) {
          from.released += fromUnits;
          a.held -= fromUnits;
          a.available += fromUnits;
        }
        const hold: Hold = { id: `hold_${++n}`, tenantId: req.tenant_id, units, status: "open", captured: 0n, released: 0n, allotment: !!req.allotment };
        holds.set(hold.id, hold);
        a.available -= units;
        a.held += units;
        return { hold_id: hold.id, balance: balanceOf(req.tenant_id) };
      },
    );
  /** A post (held -> revenue) or a release (held -> available) of part of an open allotment. */
  const draw = (kind: "post" | "release", req: { operation_id: string; hold_id: string; units: string; reason?: string }) =>
    once(req.operation_id, [kind, req.hold_id, req.units, req.reason ?? ""], () => {
      const hold = holds.get(req.hold_id);
      if (!hold) throw new AppError("not_found", "No such hold.");
      if (!hold.allotment) throw new AppError("invalid_request", "not an allotment");
      if (hold.status !== "open") throw new AppError("conflict", `The hold is already ${hold.status}.`);
      const units = BigInt(req.units);
      if (units <= 0n || units > hold.units - hold.captured - hold.released) throw new AppError("invalid_request", `units exceed the hold (${hold.units})`);
      const a = account(hold.tenantId);
      a.held -= units;
      if (kind === "post") hold.captured += units;
      else {
        hold.released += units;
        a.available += units;
      }
      return { hold: view(hold), balance: balanceOf(hold.tenantId) };
    });
  type Item = {
    reserve?: ReserveReq;
    capture?: Parameters<typeof capture>[0];
    void?: Parameters<typeof voidHold>[0];
    post?: Parameters<typeof draw>[1];
    release?: Parameters<typeof draw>[1];
  };
  const applyBatch = async (req: { items: Item[]; reports?: { hold_id: string; claimed_units: string; version: string }[] }) => {
    const results = [];
    for (const item of req.items) {
      try {
        if (item.reserve) results.push({ reserved: await reserve(item.reserve) });
        else if (item.capture) results.push({ captured: await capture(item.capture) });
        else if (item.void) results.push({ voided: await voidHold(item.void) });
        else if (item.post) results.push({ posted: await draw("post", item.post) });
        else if (item.release) results.push({ released: await draw("release", item.release) });
        else throw new AppError("invalid_request", "an item needs one movement");
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        results.push({ error: { code: err.code, message: err.message } });
      }
    }
    for (const r of req.reports ?? []) {
      const before = reports.get(r.hold_id);
      if (!before || before.version < BigInt(r.version)) reports.set(r.hold_id, { claimed: BigInt(r.claimed_units), version: BigInt(r.version) });
    }
    return { results };
  };
  const capture = async (req: { operation_id: string; hold_id: string; units: string; reason?: string }) => settle("capture", req);
  const voidHold = async (req: { operation_id: string; hold_id: string; reason?: string }) => settle("void", req);
  const getHold = async (req: { hold_id: string }) => {
    const h = holds.get(req.hold_id);
    if (!h) throw new AppError("not_found", "No such hold.");
    return view(h);
  };
  const getHolds = async (req: { hold_ids: string[] }) => ({ holds: req.hold_ids.flatMap((id) => (holds.has(id) ? [view(holds.get(id)!)] : [])) });
  /** Posts by their operation ids (the only transfers managed-ai looks up). */
  const getTransfers = async (req: { operation_ids: string[] }) => ({
    transfers: req.operation_ids.flatMap((id) => {
      const r = seen.get(id)?.result as { hold?: { hold_id: string; tenant_id: string } } | undefined;
      const params = seen.get(id) ? (JSON.parse(seen.get(id)!.fingerprint) as unknown[]) : null;
      if (!r || !params || params[0] !== "post") return [];
      return [{ operation_id: id, kind: "post", tenant_id: r.hold?.tenant_id ?? "", units: String(params[2]), hold_id: String(params[1]), entry_id: id }];
    }),
  });
  const client = {
    Reserve: reserve,
    Capture: capture,
    Void: voidHold,
    GetHold: getHold,
    GetHolds: getHolds,
    ApplyBatch: applyBatch,
    GetTransfers: getTransfers,
    close() {},
  };
  return {
    calls: new LedgerCalls(client as unknown as Client<typeof ledgerV1>, createLogger({ service: "memory-ledger", level: "silent" }), { batching: false }),
    client,
    /** The newest report of what each allotment has claimed. */
    reports,
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
    /** credits - charges = available + held, and every allotment within its units. */
    invariant(tenantId: string): boolean {
      const a = account(tenantId);
      let charged = 0n;
      for (const h of holds.values()) {
        if (h.tenantId !== tenantId) continue;
        charged += h.captured;
        if (h.captured + h.released > h.units) return false;
      }
      let open = 0n;
      for (const h of holds.values()) if (h.tenantId === tenantId && h.status === "open") open += h.units - h.captured - h.released;
      return a.credited - charged === a.available + a.held && open === a.held && a.available >= 0n;
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
