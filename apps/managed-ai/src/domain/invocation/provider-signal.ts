import { AppError } from "@gateway/errors";
import { ProviderError, type ProviderClient } from "../../providers/openai.js";

/** Why a provider call was aborted by the gateway (never by the provider). */
export type AbortReason = "deadline_exceeded" | "client_disconnected";

const MAX_TIMER_MS = 2_147_483_647;

export type ProviderSignal = {
  /** Aborts the provider call: at the request's deadline, and (when the call does not outlive its client) when the client leaves. */
  signal: AbortSignal;
  /** Why `signal` aborted, once it has. */
  reason(): AbortReason | null;
  /** The client left: a call that does not outlive its client is aborted now. */
  clientGone(): void;
  /** Stops the deadline timer and the client listener. */
  dispose(): void;
};

/**
 * What bounds one provider call. A metered call outlives its client
 * (CONTRACT.md section 6, docs/decisions/0177): a client that disconnects stops
 * the relay, not the metering, so only the request's deadline (the gRPC
 * deadline the edge set, INVOKE_DEADLINE_MS) and the provider timeouts end it.
 * A call whose meter says it does not outlive its client (none does today: byok
 * calls are recorded and budgeted too) is also aborted when the client leaves.
 */
export function providerSignal(input: { signal: AbortSignal; deadline?: Date | undefined }, outlivesClient: boolean): ProviderSignal {
  const controller = new AbortController();
  let reason: AbortReason | null = null;
  const abort = (why: AbortReason) => {
    if (controller.signal.aborted) return;
    reason = why;
    controller.abort();
  };
  // A timer longer than Node's limit (about 24.8 days) would fire at once: such a deadline is none.
  const ms = input.deadline ? Math.max(0, input.deadline.getTime() - Date.now()) : Infinity;
  const timer = ms <= MAX_TIMER_MS ? setTimeout(() => abort("deadline_exceeded"), ms) : undefined;
  const onClientGone = () => abort("client_disconnected");
  if (!outlivesClient) {
    if (input.signal.aborted) onClientGone();
    else input.signal.addEventListener("abort", onClientGone, { once: true });
  }
  return {
    signal: controller.signal,
    reason: () => reason,
    clientGone: () => {
      if (!outlivesClient) onClientGone();
    },
    dispose: () => {
      clearTimeout(timer);
      input.signal.removeEventListener("abort", onClientGone);
    },
  };
}

/** A failure of the provider call, named by why the gateway aborted it when it did. */
export function abortedFailure(reason: AbortReason): ProviderError {
  return reason === "deadline_exceeded"
    ? new ProviderError("deadline_exceeded", new AppError("unavailable", "The request's deadline passed before the provider finished."))
    : new ProviderError("client_disconnected", new AppError("unavailable", "The request was cancelled."));
}

/** The ProviderError for anything a provider call threw, with the gateway's own abort named as such. */
export function callFailure(provider: ProviderClient, err: unknown, call: ProviderSignal): ProviderError {
  const failure = provider.asTransportFailure(err, call.signal);
  const reason = call.reason();
  return failure.code === "client_disconnected" && reason ? abortedFailure(reason) : failure;
}

/** Codes after which the provider may have done (and billed) the work although no usage came: the hold waits for an operator. */
export const USAGE_UNKNOWN_ABORTS: ReadonlySet<string> = new Set(["deadline_exceeded", "client_disconnected"]);
