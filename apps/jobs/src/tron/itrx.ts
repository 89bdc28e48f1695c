import { createHmac } from "node:crypto";
import {
  withSlash,
  type EnergyProvider,
  type FulfilmentOutcome,
  type OrderOutcome,
  type OrderRequest,
  type ProviderPeriod,
  type RefusalCode,
} from "./provider.js";

/**
 * itrx.io ("TronEnergy") energy rental API, from its public developer
 * documentation (docs/decisions/0105):
 * - `POST /api/v1/frontend/order` {energy_amount, period, receive_address,
 *   out_trade_no} → {errno, serial, amount, balance}; signed: headers `API-KEY`,
 *   `TIMESTAMP` (seconds) and `SIGNATURE` = hex HMAC-SHA256(API secret,
 *   `<timestamp>&<body>`), the body being the JSON with keys sorted and no spaces;
 * - `GET /api/v1/frontend/order/query?serial=…` (header `API-KEY`) → {errno,
 *   order_no, status, details: [{delegate_hash, …}]}, errno 404 when there is no
 *   such order. Only the Chinese page also takes `out_trade_no`; the English and
 *   Russian pages and every public client require `serial`, so nothing here asks
 *   by `out_trade_no` (it is sent, as a label, and is the job id);
 * - errors as `{errno, message}` (HTTP 200) or HTTP 400 `{detail}` / per-field arrays;
 * - `GET /api/v1/frontend/index-data` → {minimum_order_energy, …}.
 * itrx does not deduplicate orders (`repeatable` false): the runner never asks it
 * twice for one lease, and reconciles an attempt whose answer was lost on chain
 * (docs/decisions/0245).
 */

/** The periods itrx sells: 1 hour, then 1 to 30 days. */
export const ITRX_PERIODS: readonly ProviderPeriod[] = [
  { name: "1H", seconds: 3_600 },
  ...Array.from({ length: 30 }, (_, i) => ({ name: `${i + 1}D`, seconds: (i + 1) * 86_400 })),
];

/** The smallest itrx period that covers `durationSeconds`, or null when none does. */
export function itrxPeriod(durationSeconds: number): ProviderPeriod | null {
  return ITRX_PERIODS.find((p) => p.seconds >= durationSeconds) ?? null;
}

/** Order statuses (order query `status`) after which nothing will be delegated. */
export const ITRX_FAILED_STATUSES: ReadonlyMap<number, string> = new Map([
  [0, "closed on timeout"],
  [41, "refunded and ended"],
  [43, "ended abnormally"],
]);

/** The JSON text itrx signs: keys sorted, no whitespace, non-ASCII escaped (Python's `json.dumps(sort_keys=True, separators=(",", ":"))`). */
export function canonicalJson(body: Record<string, string | number>): string {
  const sorted = Object.fromEntries(
    Object.keys(body)
      .sort()
      .map((k) => [k, body[k]]),
  );
  return JSON.stringify(sorted).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function itrxSignature(secret: string, timestamp: string, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}&${body}`).digest("hex");
}

/** Why a refusal is the operator's short balance at itrx: the errno answers' `message` ("insufficient balance", "余额不足") or the HTTP 400 `detail` ("Insufficient funds"). */
const BALANCE_SHORT = /balance|余额|insufficient funds|not enough funds/i;

/** A refusal's code from itrx's `errno`/`message` (its documentation publishes no errno table: the message tells a short balance). */
export function itrxRefusal(errno: number, message: string): { code: RefusalCode; reason: string } {
  const reason = `errno ${errno}${message ? `: ${message.slice(0, 200)}` : ""}`;
  if (BALANCE_SHORT.test(message)) return { code: "provider_balance_short", reason };
  return { code: "provider_refused", reason };
}

/**
 * The printable reason of an itrx error body, whichever of its shapes it has:
 * `{errno, message}` (answered with HTTP 200), `{detail: "Insufficient funds"}` or
 * `{detail: "API not found"}` (HTTP 400), or per-field arrays
 * (`{"energy_amount": ["…"], "period": ["…"]}`, HTTP 400). Never the whole body.
 */
export function itrxReason(body: Record<string, unknown> | undefined): string | undefined {
  if (!body) return undefined;
  for (const key of ["detail", "message", "error"]) {
    const value = body[key];
    if (typeof value === "string" && value !== "") return value.slice(0, 200);
  }
  const fields = Object.entries(body)
    .filter(([, v]) => Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === "string"))
    .map(([k, v]) => `${k}: ${(v as string[]).join(" ")}`);
  return fields.length > 0 ? fields.join("; ").slice(0, 200) : undefined;
}

type QueryOutcome = { kind: "found"; order: ItrxOrder } | { kind: "missing" } | Exclude<OrderOutcome, { kind: "ordered" }>;
type ItrxOrder = { order_no?: unknown; status?: unknown; details?: unknown };
type Answer = { kind: "answer"; status: number; body: Record<string, unknown> | undefined } | { kind: "unreachable"; reason: string; notPlaced?: boolean };

export type ItrxOptions = {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => number;
  /** How long the reported minimum order is kept before it is asked again (default ITRX_MINIMUM_TTL_MS). */
  minimumTtlMs?: number;
};

/** How long `minimum_order_energy` is cached: it changes rarely (10 000 to 32 000 seen), and a quote must not wait for itrx. */
export const ITRX_MINIMUM_TTL_MS = 10 * 60_000;

export class ItrxEnergyProvider implements EnergyProvider {
  readonly name = "itrx";
  readonly repeatable = false;
  private minimum: { value: number; at: number } | undefined;
  private asking: Promise<number | null> | undefined;
  constructor(private readonly options: ItrxOptions) {}

  /**
   * `minimum_order_energy` of `GET /api/v1/frontend/index-data` (header `API-KEY`), kept
   * `minimumTtlMs`; concurrent quotes share one request. When itrx cannot be asked (or
   * answers without it: the documented answer to a wrong key is empty data), the last
   * value it reported stands, however old; null when it never reported one.
   */
  async minimumEnergy(): Promise<number | null> {
    const now = this.options.now?.() ?? Date.now();
    if (this.minimum && now - this.minimum.at < (this.options.minimumTtlMs ?? ITRX_MINIMUM_TTL_MS)) return this.minimum.value;
    this.asking ??= this.askMinimum(now).finally(() => {
      this.asking = undefined;
    });
    return this.asking;
  }

  private async askMinimum(now: number): Promise<number | null> {
    const answer = await this.call("api/v1/frontend/index-data", { method: "GET", headers: { "api-key": this.options.apiKey } });
    const value = answer.kind === "answer" && answer.status === 200 ? answer.body?.minimum_order_energy : undefined;
    if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) this.minimum = { value, at: now };
    return this.minimum?.value ?? null;
  }

  period(durationSeconds: number): ProviderPeriod | null {
    return itrxPeriod(durationSeconds);
  }

  /** One signed `POST`, never preceded by a query: the runner decides whether it may be sent (docs/decisions/0245). */
  async order(request: OrderRequest): Promise<OrderOutcome> {
    const period = itrxPeriod(request.durationSeconds);
    if (!period) return { kind: "refused", code: "provider_refused", reason: `no itrx period covers ${request.durationSeconds} s` };
    const body = canonicalJson({ energy_amount: request.energy, out_trade_no: request.clientOrderId, period: period.name, receive_address: request.receiver });
    const timestamp = String(Math.floor((this.options.now?.() ?? Date.now()) / 1000));
    const answer = await this.call("api/v1/frontend/order", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "api-key": this.options.apiKey,
        timestamp,
        signature: itrxSignature(this.options.apiSecret, timestamp, body),
      },
      body,
    });
    const failure = httpFailure(answer);
    if (failure) return failure;
    const { body: b } = answer as Extract<Answer, { kind: "answer" }>;
    if (!b || typeof b.errno !== "number") return { kind: "unreachable", reason: "order answer without errno" };
    if (b.errno !== 0) return { kind: "refused", ...itrxRefusal(b.errno, itrxReason(b) ?? "") };
    if (typeof b.serial !== "string" || b.serial === "") return { kind: "unreachable", reason: "order answer without serial" };
    return { kind: "ordered", orderId: b.serial };
  }

  async fulfilment(order: { orderId: string; clientOrderId: string }): Promise<FulfilmentOutcome> {
    const found = await this.query(order.orderId);
    if (found.kind === "missing") return { kind: "failed", code: "provider_order_failed", reason: "the provider does not know the order" };
    if (found.kind === "unreachable") return found;
    if (found.kind === "refused") return { kind: "failed", code: found.code, reason: found.reason };
    const status = typeof found.order.status === "number" ? found.order.status : -1;
    const ended = ITRX_FAILED_STATUSES.get(status);
    if (ended) return { kind: "failed", code: "provider_order_failed", reason: `the provider's order was ${ended} (status ${status})` };
    const details = Array.isArray(found.order.details) ? (found.order.details as { delegate_hash?: unknown }[]) : [];
    const txids = [...new Set(details.map((d) => d?.delegate_hash).filter((h): h is string => typeof h === "string" && /^[0-9a-fA-F]{64}$/.test(h)))];
    return { kind: "progress", txids: txids.map((t) => t.toLowerCase()) };
  }

  /** The order by its `serial`, the only key the English documentation gives the query. */
  private async query(serial: string): Promise<QueryOutcome> {
    const answer = await this.call(`api/v1/frontend/order/query?serial=${encodeURIComponent(serial)}`, {
      method: "GET",
      headers: { "api-key": this.options.apiKey },
    });
    if (answer.kind === "answer" && answer.body?.errno === 404) return { kind: "missing" };
    const failure = httpFailure(answer);
    if (failure) return failure;
    const { body } = answer as Extract<Answer, { kind: "answer" }>;
    if (body?.errno !== 0) return { kind: "unreachable", reason: `order query answered errno ${String(body?.errno)}` };
    return { kind: "found", order: body as ItrxOrder };
  }

  private async call(path: string, init: RequestInit): Promise<Answer> {
    const doFetch = this.options.fetch ?? fetch;
    let res: Response;
    try {
      res = await doFetch(new URL(path, withSlash(this.options.baseUrl)), { ...init, signal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (err) {
      if ((err as Error).name === "TimeoutError") return { kind: "unreachable", reason: "timeout" };
      // No connection was made: nothing can have been placed.
      const cause = (err as Error).cause as { code?: unknown; message?: unknown } | undefined;
      const refused = cause?.code === "ECONNREFUSED" || cause?.code === "ENOTFOUND" || cause?.code === "EAI_AGAIN" || cause?.message === "bad port";
      return { kind: "unreachable", reason: "connection failed", ...(refused ? { notPlaced: true } : {}) };
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      return { kind: "unreachable", reason: (err as Error).name === "TimeoutError" ? "timeout" : "answer cut short" };
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      return { kind: "answer", status: res.status, body: parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : undefined };
    } catch {
      return { kind: "answer", status: res.status, body: undefined };
    }
  }
}

/**
 * HTTP-level outcomes (decision 0105's table, amended by 0245): retry on no answer, 429
 * and 5xx; refuse on 401/403 (credentials), 402 and a 4xx whose reason tells a short
 * balance (the operator's), other 4xx (the reason kept: `detail`, per-field arrays).
 */
function httpFailure(answer: Answer): Exclude<OrderOutcome, { kind: "ordered" }> | undefined {
  if (answer.kind === "unreachable") return answer;
  const { status, body } = answer;
  const said = itrxReason(body);
  const message = said ? `HTTP ${status}: ${said}` : `HTTP ${status}`;
  if (status === 401 || status === 403)
    return { kind: "refused", code: "provider_auth_failed", reason: `the provider refused the API key or signature (${message})` };
  if (status === 402) return { kind: "refused", code: "provider_balance_short", reason: message };
  // 429 and 503 are refusals to serve, nothing placed; another 5xx may come after the order was taken.
  if (status === 429 || status === 503) return { kind: "unreachable", reason: `HTTP ${status}`, notPlaced: true };
  if (status >= 500) return { kind: "unreachable", reason: `HTTP ${status}` };
  if (status < 200 || status >= 300) {
    if (typeof body?.errno === "number") return { kind: "refused", ...itrxRefusal(body.errno, said ?? "") };
    return { kind: "refused", code: said && BALANCE_SHORT.test(said) ? "provider_balance_short" : "provider_refused", reason: message };
  }
  if (!body) return { kind: "unreachable", reason: "answer is not JSON" };
  return undefined;
}
