import { cpuPerRequest, sampleCpu, type ProcessGroup } from "./cpu.js";
import type { Gateway } from "./gateway.js";
import { load, type LoadResult } from "./load.js";
import type { Started } from "./targets.js";

export type Mode = "json" | "stream";

export type Target = {
  name: "direct" | "portkey" | "gateway";
  url: string;
  headers: Record<string, string>;
  groups: ProcessGroup[];
};

export function body(mode: Mode, model: string): string {
  return JSON.stringify({
    model,
    messages: [{ role: "user", content: "Say hello to the benchmark" }],
    max_tokens: 16,
    ...(mode === "stream" ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

export function targets(mock: Started, portkey: Started, gateway: Gateway, mockKey: string): Target[] {
  const mockGroup: ProcessGroup = { name: "mock provider", pids: () => [mock.pid] };
  return [
    { name: "direct", url: `${mock.url}/chat/completions`, headers: { authorization: `Bearer ${mockKey}` }, groups: [mockGroup] },
    {
      name: "portkey",
      url: `${portkey.url}/v1/chat/completions`,
      headers: { authorization: `Bearer ${mockKey}`, "x-portkey-provider": "openai", "x-portkey-custom-host": mock.url },
      groups: [{ name: "portkey", pids: () => [portkey.pid] }, mockGroup],
    },
    {
      name: "gateway",
      url: `${gateway.url}/v1/apps/ai/bench/v1/chat/completions`,
      headers: { "x-api-key": gateway.key },
      groups: [...gateway.groups(), mockGroup],
    },
  ];
}

export type Measured = LoadResult & {
  target: Target["name"];
  mode: Mode;
  cpu: Map<string, number>;
  /** Gateway runs only: the money of the run checked against its answers. */
  audit?: {
    completed: number;
    okAnswers: number;
    charged: bigint;
    balanceDrop: bigint;
    reservedAfter: bigint;
    otherRecords: number;
    invariantOk: boolean;
    /** How long after the last answer the views agreed with the records (or the 5 s it waited). */
    caughtUpMs: number;
    /** Ledger calls during the run (and its settling moment), per answered request. */
    ledgerCallsPerRequest: number;
  };
};

/**
 * One measured run of `amount` requests (so none is cut off at the end): throughput,
 * latency, CPU per request of every process of the target, and for the gateway the
 * accounting of the run: completed usage records = 200 answers, the sum of their
 * final units = the tenant's balance drop, nothing left reserved, invariant ok.
 */
export async function measure(
  target: Target,
  mode: Mode,
  connections: number,
  amount: number,
  gateway: Gateway,
  model: (t: Target) => string,
): Promise<Measured> {
  const before = target.name === "gateway" ? await gateway.ledgerState(0n) : undefined;
  if (target.name === "gateway") await gateway.snapshotBackends();
  const cpuBefore = sampleCpu(target.groups);
  const result = await load({
    label: target.name,
    url: target.url,
    connections,
    durationSeconds: 0,
    amount,
    method: "POST",
    headers: { "content-type": "application/json", ...target.headers },
    body: body(mode, model(target)),
  });
  const cpu = cpuPerRequest(cpuBefore, sampleCpu(target.groups), result.total);
  const measured: Measured = { ...result, target: target.name, mode, cpu };
  if (before) {
    // The views catch up with the last answers once their charges are posted (the
    // allotments' batches, decision 0028; CONTRACT.md section 4: within 1 s): read them
    // until they agree with this run's records, for at most 5 s (a real drift never
    // does), and say how long that took. A reading is this run's records (by seq) and the
    // balance, so its own cost does not grow with the tenant's history; the invariant,
    // which sums the whole journal, is checked once after the timing.
    const finished = Date.now();
    let after = before;
    let readings = 0;
    const agrees = (s: typeof before) => s.completed === result.ok && s.finalUnits === before.available - s.available && s.reserved === 0n;
    do {
      await new Promise((r) => setTimeout(r, 100));
      after = await gateway.ledgerState(before.lastSeq);
      readings++;
    } while (!agrees(after) && Date.now() - finished < 5_000);
    const caughtUpMs = Date.now() - finished;
    measured.audit = {
      completed: after.completed,
      okAnswers: result.ok,
      charged: after.finalUnits,
      balanceDrop: before.available - after.available,
      reservedAfter: after.reserved,
      otherRecords: after.otherRecords,
      invariantOk: await gateway.invariantOk(),
      caughtUpMs,
      // Each reading makes one call (GetBalance) after reading the calls so far: the
      // first reading's is counted in the second, and so on, so one per reading is not the run's.
      ledgerCallsPerRequest: (after.ledgerCalls - before.ledgerCalls - readings) / Math.max(1, result.ok),
    };
  }
  return measured;
}

export function auditOk(m: Measured): boolean {
  const a = m.audit;
  if (!a) return true;
  return a.completed === a.okAnswers && a.charged === a.balanceDrop && a.reservedAfter === 0n && a.otherRecords === 0 && a.invariantOk;
}

/** A run passes when every request got a 2xx and its money (if audited) is exact. */
export function runOk(m: Measured): boolean {
  return m.errors + m.non2xx === 0 && auditOk(m);
}

/** Mean CPU per request of each process over several runs of one target. */
export function meanCpu(runs: Measured[]): Map<string, number> {
  const cpu = new Map<string, number>();
  for (const r of runs) for (const [k, v] of r.cpu) cpu.set(k, (cpu.get(k) ?? 0) + v / runs.length);
  return cpu;
}
