import { performance } from "node:perf_hooks";
import type { InvocationMetrics } from "../domain/ports.js";
import { HTTP_STATUS, isAppError } from "@gateway/errors";
import { currentContext, type RequestContext } from "@gateway/logger";
import { Histogram, LATENCY_BUCKETS, type Registry, SeriesCounter } from "@gateway/metrics";

/** What one metered call has learnt by its end: the model it resolved and the time its provider took. */
type Call = { model: string; providerMs: number };

const UNRESOLVED = "unknown";

/**
 * The operations metrics of AI calls (CONTRACT.md section 13, docs/decisions/0211), on
 * managed-ai's metrics port:
 *  - `gateway_ai_requests_total{model, status}`: each call by the HTTP status it ended
 *    with (200 once an answer or a stream began; a refusal's or failure's status
 *    otherwise; model `unknown` when the call failed before its model was known);
 *  - `gateway_ai_spend_units_total{tenant, model}`: units charged to the balance
 *    (managed calls; bring-your-own-key calls are never charged);
 *  - `gateway_ai_tokens_total{tenant, model, kind}`: the provider's reported input and
 *    output tokens (both modes);
 *  - `gateway_ai_overhead_seconds`: a call's time in managed-ai less its provider's.
 * `tenantLabel: false` drops the `tenant` label (large fleets). Every count is a
 * `SeriesCounter` cell: nothing is allocated per call once a series exists.
 *
 * A call is followed through its request context (one per gRPC call): `track` opens
 * it, the meter names its model (`planned`), the provider client adds its time
 * (`providerCall`), and `track` records it when the call's work ends.
 */
export class AiMetrics implements InvocationMetrics {
  private readonly calls = new WeakMap<RequestContext, Call>();
  private readonly requests: SeriesCounter;
  private readonly spend: SeriesCounter;
  private readonly tokens: SeriesCounter;
  private readonly overhead: Histogram;

  constructor(
    registry: Registry,
    private readonly options: { tenantLabel: boolean },
  ) {
    const tenant = options.tenantLabel ? ["tenant"] : [];
    this.requests = new SeriesCounter("gateway_ai_requests_total", "AI calls by model and the HTTP status they ended with.", ["model", "status"], [registry]);
    this.spend = new SeriesCounter("gateway_ai_spend_units_total", "Units of USD 0.0001 charged to balances for AI calls.", [...tenant, "model"], [registry]);
    this.tokens = new SeriesCounter(
      "gateway_ai_tokens_total",
      "Tokens the providers reported for AI calls, by kind (input, output).",
      [...tenant, "model", "kind"],
      [registry],
    );
    this.overhead = new Histogram({
      name: "gateway_ai_overhead_seconds",
      help: "A call's time in managed-ai less the time its provider took (reservation, records, settlement).",
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  /** Follows the call `run` makes, within the current request context; records it when `run` settles. */
  async track<T>(run: () => Promise<T>): Promise<T> {
    const context = currentContext();
    if (!context) return run();
    const call: Call = { model: UNRESOLVED, providerMs: 0 };
    this.calls.set(context, call);
    const start = performance.now();
    let status = 200;
    try {
      return await run();
    } catch (err) {
      status = isAppError(err) ? HTTP_STATUS[err.code] : 500;
      throw err;
    } finally {
      this.requests.series(call.model, statusText(status)).value += 1;
      this.overhead.observe(Math.max(0, performance.now() - start - call.providerMs) / 1000);
    }
  }

  /** The call's model is known (its meter opened). */
  planned(model: string): void {
    const call = this.current();
    if (call) call.model = model;
  }

  /** A provider call starts; the function returned is told how long it took (until its body was read or dropped). */
  providerCall(): ((elapsedMs: number) => void) | undefined {
    const call = this.current();
    return call
      ? (elapsedMs) => {
          call.providerMs += elapsedMs;
        }
      : undefined;
  }

  /** A call settled on the provider's usage: `chargedUnits` is what the balance paid (0 for byok). */
  settled(input: { tenantId: string; model: string; chargedUnits: bigint; inputTokens: bigint; outputTokens: bigint }): void {
    const { tenantId, model } = input;
    if (this.options.tenantLabel) {
      if (input.chargedUnits > 0n) this.spend.series(tenantId, model).value += Number(input.chargedUnits);
      this.tokens.series(tenantId, model, "input").value += Number(input.inputTokens);
      if (input.outputTokens > 0n) this.tokens.series(tenantId, model, "output").value += Number(input.outputTokens);
    } else {
      if (input.chargedUnits > 0n) this.spend.series(model).value += Number(input.chargedUnits);
      this.tokens.series(model, "input").value += Number(input.inputTokens);
      if (input.outputTokens > 0n) this.tokens.series(model, "output").value += Number(input.outputTokens);
    }
  }

  private current(): Call | undefined {
    const context = currentContext();
    return context ? this.calls.get(context) : undefined;
  }
}

/** Status codes as label values, made once. */
const STATUS_TEXT = new Map<number, string>();
function statusText(status: number): string {
  let text = STATUS_TEXT.get(status);
  if (text === undefined) {
    text = String(status);
    STATUS_TEXT.set(status, text);
  }
  return text;
}
