import { createClient } from "@gateway/grpc-kit";
import { LedgerCalls } from "@gateway/ledger-client";
import { createLogger } from "@gateway/logger";
import { ledgerV1 } from "@gateway/protos";

/**
 * A point where a test holds one side of an interleaving: `reached` resolves when the
 * side gets there, which then waits until `open()`.
 */
export type Gate = { reached: Promise<void>; wait(): Promise<void>; open(): void };

export function gate(): Gate {
  let arrive!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (arrive = r));
  const opened = new Promise<void>((r) => (release = r));
  return {
    reached,
    async wait() {
      arrive();
      await opened;
    },
    open: () => release(),
  };
}

type Method = "reserve" | "capture" | "void" | "release" | "postCharges";

/**
 * The ledger door, with the first call `when` picks held at `gate` before it is sent
 * (or, with `after`, once the ledger has answered it, before the caller hears the
 * answer), or failed instead with `fail` (an error, as the ledger or the network
 * would give it; `times` calls). Later calls go through.
 */
export function pausingLedger(
  calls: LedgerCalls,
  when: (method: Method, request: { operation_id?: string }) => boolean,
  action: { gate: Gate; after?: boolean } | { fail: () => Error; times?: number },
): LedgerCalls {
  let left = "gate" in action ? 1 : (action.times ?? 1);
  const picks = (method: Method, request: { operation_id?: string }) => {
    if (left <= 0 || !when(method, request)) return false;
    left--;
    return true;
  };
  const hold = async (method: Method, request: { operation_id?: string }) => {
    if ("gate" in action && action.after) return;
    if (!picks(method, request)) return;
    if ("gate" in action) await action.gate.wait();
    else throw action.fail();
  };
  const answered = async <T>(method: Method, request: { operation_id?: string }, answer: T): Promise<T> => {
    if ("gate" in action && action.after && picks(method, request)) await action.gate.wait();
    return answer;
  };
  return new Proxy(calls, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      if (prop === "postCharges") {
        return async (charges: { requestId: string }[], ...rest: unknown[]) => {
          // A call with reports only is matched as one with no operation id.
          if (charges.length === 0) await hold("postCharges", {});
          for (const c of charges) await hold("postCharges", { operation_id: `post:${c.requestId}` });
          return (value as (...a: unknown[]) => unknown).call(target, charges, ...rest);
        };
      }
      if (prop === "reserve" || prop === "capture" || prop === "void" || prop === "release") {
        return async (request: { operation_id?: string }) => {
          await hold(prop, request);
          return answered(prop, request, await (value as (r: unknown) => Promise<unknown>).call(target, request));
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

export type SwitchableLedger = {
  /** The door to hand a context. */
  calls: LedgerCalls;
  /** While true, every call (movement or read) finds the ledger unreachable. */
  down(on: boolean): void;
  /** Calls of this `LedgerCalls` method (`holds` is GetHolds, `capture` a capture, …) sent to the real ledger so far. */
  sent(method: keyof LedgerCalls): number;
  close(): void;
};

/**
 * The ledger door with a switch, for "the ledger is down": while down, every call
 * goes to a ledger that is not there (a client of a port nothing listens on, so the
 * errors are those of an unreachable ledger, as grpc-kit gives them); otherwise to
 * `calls`, counted by method.
 */
export function switchableLedger(calls: LedgerCalls): SwitchableLedger {
  const gone = createClient(ledgerV1, "127.0.0.1:1", { deadlineMs: 5_000, name: "ledger (down)" });
  const away = new LedgerCalls(gone, createLogger({ service: "managed-ai-test", level: "silent" }), { batching: false });
  const counts = new Map<PropertyKey, number>();
  let down = false;
  const door = new Proxy(calls, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (down) return (Reflect.get(away, prop) as (...a: unknown[]) => unknown).apply(away, args);
        counts.set(prop, (counts.get(prop) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    calls: door,
    down: (on) => (down = on),
    sent: (method) => counts.get(method) ?? 0,
    close: () => gone.close(),
  };
}
