import { AppError } from "@gateway/errors";
import { ProviderError, type Provider } from "./provider.js";

/** Why a provider call was aborted by the gateway (never by the provider or by its client). */
export type AbortReason = "deadline_exceeded";

const MAX_TIMER_MS = 2_147_483_647;

export type ProviderSignal = {
  /** Aborts the provider call at the request's deadline. */
  signal: AbortSignal;
  /** Why `signal` aborted, once it has. */
  reason(): AbortReason | null;
  /** Stops the deadline timer. */
  dispose(): void;
};

/**
 * What bounds one provider call: a call outlives its client (CONTRACT.md section 6,
 * docs/decisions/0177): a client that disconnects stops the relay, not the metering,
 * so only the request's deadline (the gRPC deadline the edge set, INVOKE_DEADLINE_MS)
 * and the provider timeouts end it. Managed calls are charged on their usage, byok
 * calls recorded with it.
 */
export function providerSignal(input: { deadline?: Date | undefined }): ProviderSignal {
  const controller = new AbortController();
  let reason: AbortReason | null = null;
  // A timer longer than Node's limit (about 24.8 days) would fire at once: such a deadline is none.
  const ms = input.deadline ? Math.max(0, input.deadline.getTime() - Date.now()) : Infinity;
  const timer =
    ms <= MAX_TIMER_MS
      ? setTimeout(() => {
          reason = "deadline_exceeded";
          controller.abort();
        }, ms)
      : undefined;
  return {
    signal: controller.signal,
    reason: () => reason,
    dispose: () => clearTimeout(timer),
  };
}

/** The ProviderError for anything a provider call threw, with the gateway's own abort (the deadline) named as such. */
export function callFailure(provider: Provider, err: unknown, call: ProviderSignal): ProviderError {
  const failure = provider.asTransportFailure(err, call.signal);
  return failure.code === "client_disconnected" && call.reason()
    ? new ProviderError("deadline_exceeded", new AppError("unavailable", "The request's deadline passed before the provider finished."))
    : failure;
}

/** Codes after which the provider may have done (and billed) the work although no usage came: the hold waits for an operator. */
export const USAGE_UNKNOWN_ABORTS: ReadonlySet<string> = new Set(["deadline_exceeded", "client_disconnected"]);
