/**
 * The energy rental provider, behind one type with two adapters:
 * - `HttpEnergyProvider` (TRON_PROVIDER=generic, docs/decisions/0102):
 *   POST {base}/orders {client_order_id, receiver, energy, duration_seconds}
 *   with `Idempotency-Key: <client_order_id>` → 2xx {id, status, delegator};
 * - `ItrxEnergyProvider` (TRON_PROVIDER=itrx, `itrx.ts`, docs/decisions/0105).
 * The job id is the client order id. The generic API deduplicates it (asking
 * again for the same job returns the same order: `repeatable`); itrx does not, and
 * its English documentation finds an order by its `serial` only, so the runner
 * records its intent before ordering and never asks itrx twice for one lease: an
 * attempt whose answer was lost is reconciled on chain (docs/decisions/0245).
 */
export type OrderRequest = { clientOrderId: string; receiver: string; energy: number; durationSeconds: number };

/** Why a provider refused: each is the `error.code` of the failed job. */
export type RefusalCode = "provider_refused" | "provider_balance_short" | "provider_auth_failed" | "provider_order_failed";

export type OrderOutcome =
  /** `delegator` when the provider says which address delegates (the fallback check of 0106 needs it). */
  | { kind: "ordered"; orderId: string; delegator?: string | undefined }
  /** The provider answered and refused: final (the hold is voided, the job fails with `code`). */
  | { kind: "refused"; code: RefusalCode; reason: string }
  /**
   * No usable answer (network, timeout, 5xx, 429, unreadable body): try again later.
   * `notPlaced` when the request certainly placed nothing (no connection was made, 429,
   * 503); otherwise the provider may have taken the order and its answer was lost.
   */
  | { kind: "unreachable"; reason: string; notPlaced?: boolean };

/** What the provider says of an order it took. */
export type FulfilmentOutcome =
  /** Still under way or done; `txids` are the delegation transactions it reports so far (none: it does not say). */
  | { kind: "progress"; txids: string[] }
  /** The provider ended the order without delegating (closed, refunded, aborted): final. */
  | { kind: "failed"; code: RefusalCode; reason: string }
  | { kind: "unreachable"; reason: string };

/** The provider's own rental period that covers a lease's duration (the smallest that does), when it sells by periods. */
export type ProviderPeriod = { name: string; seconds: number };

export type EnergyProvider = {
  /** `generic` or `itrx`: shown in quotes. */
  readonly name: string;
  /** Ordering again for the same client order id returns the first order (the provider deduplicates it). */
  readonly repeatable: boolean;
  /** The period the provider will be ordered for; null when it takes the duration in seconds as is. */
  period(durationSeconds: number): ProviderPeriod | null;
  order(request: OrderRequest): Promise<OrderOutcome>;
  fulfilment(order: { orderId: string; clientOrderId: string }): Promise<FulfilmentOutcome>;
  /** The smallest order the provider takes, as it reports it (cached); null when it does not say or cannot be asked. */
  minimumEnergy(): Promise<number | null>;
};

export class HttpEnergyProvider implements EnergyProvider {
  readonly name = "generic";
  /** `Idempotency-Key: <client_order_id>` (docs/decisions/0102). */
  readonly repeatable = true;
  constructor(private readonly options: { baseUrl: string; apiKey?: string | undefined; timeoutMs: number; fetch?: typeof fetch }) {}

  period(): ProviderPeriod | null {
    return null;
  }

  /** This API states no minimum: the contract's bounds (1 000 energy) are the only ones. */
  async minimumEnergy(): Promise<number | null> {
    return null;
  }

  /** This API reports no transaction: verification falls back to the delegator's sum (decision 0106). */
  async fulfilment(): Promise<FulfilmentOutcome> {
    return { kind: "progress", txids: [] };
  }

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
        body: JSON.stringify({
          client_order_id: request.clientOrderId,
          receiver: request.receiver,
          energy: request.energy,
          duration_seconds: request.durationSeconds,
        }),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (err) {
      return { kind: "unreachable", reason: (err as Error).name === "TimeoutError" ? "timeout" : "connection failed" };
    }
    const text = await res.text().catch(() => "");
    if (!res.ok) return { kind: "refused", code: "provider_refused", reason: providerMessage(text) ?? `HTTP ${res.status}` };
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
export function providerMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown };
    const m = typeof body.message === "string" ? body.message : typeof body.error === "string" ? body.error : undefined;
    return m?.slice(0, 200);
  } catch {
    return undefined;
  }
}
