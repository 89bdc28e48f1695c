import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Clock ticks per second for /proc/<pid>/stat (100 on Linux). */
const TICKS = Number(
  (() => {
    try {
      return execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim();
    } catch {
      return "100";
    }
  })(),
);

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

export function pidsOf(pattern: string): number[] {
  try {
    return execFileSync("pgrep", ["-f", pattern], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** A named group of processes whose CPU is summed (e.g. every postgres backend). */
export type ProcessGroup = { name: string; pids: () => number[] };

export type CpuSample = Map<string, number>;

export function sampleCpu(groups: ProcessGroup[]): CpuSample {
  const out = new Map<string, number>();
  for (const g of groups)
    out.set(
      g.name,
      g.pids().reduce((sum, pid) => sum + cpuSeconds(pid), 0),
    );
  out.set("load generator (this process)", process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6);
  return out;
}

/** CPU milliseconds per request of each group between two samples. */
export function cpuPerRequest(before: CpuSample, after: CpuSample, requests: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, start] of before) out.set(name, (((after.get(name) ?? start) - start) * 1000) / Math.max(1, requests));
  return out;
}
