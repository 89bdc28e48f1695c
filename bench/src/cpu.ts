import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/**
 * What a process has used so far: CPU seconds, the sum of its threads' run time in
 * nanoseconds from `/proc/<pid>/task/<tid>/schedstat` (the clock ticks of `/proc/<pid>/stat`
 * are 10 ms, too coarse for a process that idles at a fraction of a millisecond per second;
 * threads that ended are not counted, Node's and PostgreSQL's live as long as the process), and
 * wake-ups, its threads' voluntary context switches (each time a thread slept and was
 * woken again: a count the machine's load does not inflate). Zeros when it is gone.
 */
function usage(pid: number): Usage {
  let ns = 0;
  let wakeups = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
        const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
        wakeups += Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      } catch {
        // the thread ended meanwhile
      }
    }
  } catch {
    return { cpu: 0, wakeups: 0 };
  }
  return { cpu: ns / 1e9, wakeups };
}

/** Processes whose command line matches `pattern` (`pgrep -f`), or whose name is `pattern` exactly with `exact`. */
export function pidsOf(pattern: string, exact = false): number[] {
  try {
    return execFileSync("pgrep", [exact ? "-x" : "-f", pattern], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * A named group of processes whose CPU is summed (e.g. every postgres backend). `reaped`:
 * CPU seconds, so far, of the group's processes that have ended (a postmaster's waited-for
 * children, `reapedCpu`), counted as one more process, so that short-lived workers
 * (autovacuum) that start and end within a window are not lost.
 */
export type ProcessGroup = { name: string; pids: () => number[]; reaped?: () => number };

/** The pseudo-pid under which a group's `reaped` figure is kept in a sample. */
const REAPED = -1;

type Usage = { cpu: number; wakeups: number };

/** What each process of each group has used so far (group name → pid → usage). */
export type CpuSample = Map<string, Map<number, Usage>>;

const LOAD_GENERATOR = "load generator (this process)";

export function sampleCpu(groups: ProcessGroup[]): CpuSample {
  const out: CpuSample = new Map();
  for (const g of groups) {
    const pids = new Map(g.pids().map((pid) => [pid, usage(pid)]));
    if (g.reaped) pids.set(REAPED, { cpu: g.reaped(), wakeups: 0 });
    out.set(g.name, pids);
  }
  out.set(LOAD_GENERATOR, new Map([[process.pid, usage(process.pid)]]));
  return out;
}

/**
 * What each group used between two samples, process by process: a process that started
 * in between counts from zero (its start-up is part of the window, e.g. a PostgreSQL
 * backend forked for a new connection); one that ended in between is lost (its last
 * figures cannot be read), instead of making the group's sum go down.
 */
export function usageBetween(before: CpuSample, after: CpuSample): Map<string, Usage> {
  const out = new Map<string, Usage>();
  for (const [name, start] of before) {
    const sum = { cpu: 0, wakeups: 0 };
    for (const [pid, end] of after.get(name) ?? new Map<number, Usage>()) {
      const from = start.get(pid) ?? { cpu: 0, wakeups: 0 };
      sum.cpu += Math.max(0, end.cpu - from.cpu);
      sum.wakeups += Math.max(0, end.wakeups - from.wakeups);
    }
    out.set(name, sum);
  }
  return out;
}

/** CPU seconds each group used between two samples. */
export function cpuBetween(before: CpuSample, after: CpuSample): Map<string, number> {
  return new Map([...usageBetween(before, after)].map(([name, u]) => [name, u.cpu]));
}

/** CPU milliseconds per request of each group between two samples. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, seconds] of cpuBetween(before, after)) out.set(name, (seconds * 1000) / Math.max(1, requests));
  return out;
}
