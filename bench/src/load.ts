import autocannon from "autocannon";

export type LoadResult = {
  label: string;
  connections: number;
  /** Answered requests ÷ seconds from the start to the last answer. */
  requestsPerSecond: number;
  ok: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  total: number;
};

export type LoadOptions = {
  label: string;
  url: string;
  connections: number;
  /** Run this long, or (when `amount` is set) until `amount` answers arrived. */
  durationSeconds: number;
  /** A fixed number of requests: every one is answered before the run ends (no cut-off requests). */
  amount?: number;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
};

/**
 * One autocannon run; errors and non-2xx answers are counted, never hidden.
 * Throughput and percentiles come from autocannon's per-response events
 * (hrtime durations, the time of the last answer): its own summary has whole
 * milliseconds, and with `amount` it ends only at its next one-second tick.
 */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const durations: number[] = [];
  let started = 0;
  let last = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        ...(options.amount ? { amount: options.amount } : { duration: options.durationSeconds }),
        method: options.method ?? "GET",
        headers: options.headers ?? {},
        ...(options.body ? { body: options.body } : {}),
      },
      (err, res) => (err ? reject(err) : resolve(res)),
    );
    instance.on("start", () => (started = performance.now()));
    instance.on("response", (_client, _status, _bytes, ms) => {
      last = performance.now();
      durations.push(ms);
    });
  });
  durations.sort((a, b) => a - b);
  const pct = (p: number) => durations[Math.min(durations.length - 1, Math.floor((p / 100) * durations.length))] ?? 0;
  return {
    label: options.label,
    connections: options.connections,
    requestsPerSecond: durations.length / Math.max(0.001, (last - started) / 1000),
    ok: result["2xx"],
    p50: pct(50),
    p99: pct(99),
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

/** A B B A: each target runs twice, in mirrored order, so drift over the run hits both alike. */
export async function alternate(a: () => Promise<LoadResult>, b: () => Promise<LoadResult>): Promise<{ a: LoadResult[]; b: LoadResult[] }> {
  const ra1 = await a();
  const rb1 = await b();
  const rb2 = await b();
  const ra2 = await a();
  return { a: [ra1, ra2], b: [rb1, rb2] };
}

export function mean(results: LoadResult[], field: "requestsPerSecond" | "p50" | "p99"): number {
  return results.reduce((sum, r) => sum + r[field], 0) / results.length;
}
