/**
 * The energy rental provider, over its HTTP API (docs/decisions/0102):
 *   POST {base}/orders  {client_order_id, receiver, energy, duration_seconds}
 *   with `Idempotency-Key: <client_order_id>` → 2xx {id, status, delegator}
 * The job id is the client order id: asking again for the same job returns the
 * same order, so a step retried after a crash never orders twice.
 */
export type OrderRequest = { clientOrderId: string; receiver: string; energy: number; durationSeconds: number };

export type OrderOutcome =
  | { kind: "ordered"; orderId: string; delegator: string }
  /** The provider answered and refused (any non-2xx answer): final. */
  | { kind: "refused"; status: number; reason: string }
  /** No answer (network, timeout, unreadable body): try again later. */
  | { kind: "unreachable"; reason: string };

export type EnergyProvider = { order(request: OrderRequest): Promise<OrderOutcome> };

export class HttpEnergyProvider implements EnergyProvider {
  constructor(private readonly options: { baseUrl: string; apiKey?: string | undefined; timeoutMs: number; fetch?: typeof fetch }) {}

  async order(request: OrderRequest): Promise<OrderOutcome> {
    const doFetch = this.options.fetch ?? fetch;
    let res: Response;
    try {
      res = await doFetch(new URL("orders", withSlash(this.options.baseUrl)), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "idempotency-key": request.clientOrderId,
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
        },
        body: JSON.stringify({ client_order_id: request.clientOrderId, receiver: request.receiver, energy: request.energy, duration_seconds: request.durationSeconds }),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (err) {
      return { kind: "unreachable", reason: (err as Error).name === "TimeoutError" ? "timeout" : "connection failed" };
    }
    const text = await res.text().catch(() => "");
    if (!res.ok) return { kind: "refused", status: res.status, reason: providerMessage(text) ?? `HTTP ${res.status}` };
    try {
      const body = JSON.parse(text) as { id?: unknown; delegator?: unknown };
      if (typeof body.id !== "string" || typeof body.delegator !== "string") return { kind: "unreachable", reason: "order answer without id or delegator" };
      return { kind: "ordered", orderId: body.id, delegator: body.delegator };
    } catch {
      return { kind: "unreachable", reason: "order answer is not JSON" };
    }
  }
}

export function withSlash(base: string): string {
  return base.endsWith("/") ? base : `${base}/`;
}

/** A short, printable reason from a provider's error body (never the whole body). */
function providerMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const m = typeof body.message === "string" ? body.message : typeof body.error === "string" ? body.error : undefined;
    return m?.slice(0, 200);
  } catch {
    return undefined;
  }
}
