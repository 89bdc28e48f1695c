import type { LedgerCalls } from "@gateway/ledger-client";

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
