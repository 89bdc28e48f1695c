import { execFileSync } from "node:child_process";
import { cpus, totalmem } from "node:os";

/** What the figures were measured on, for the report. */
export function machine(): string {
  const pg = (() => {
    try {
      return execFileSync("psql", ["--version"], { encoding: "utf8" }).trim();
    } catch {
      return "psql not found";
    }
  })();
  const redis = (() => {
    try {
      return execFileSync("redis-server", ["--version"], { encoding: "utf8" }).split(" ").slice(0, 3).join(" ");
    } catch {
      return "redis-server not found";
    }
  })();
  return `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${pg}, ${redis}; ${handOff()}`;
}

/**
 * What a hand-off between two processes costs here: `perf bench sched pipe` (two processes
 * passing a byte back and forth), µs a round trip, the best of three short runs. The
 * gateway's request crosses about ten processes and machines differ most in this
 * (docs/benchmarks/optimizations.md, "the run at c4bf6ab on a slow, busy machine").
 */
export function handOff(): string {
  try {
    const runs = [0, 1, 2].map((): number => {
      const out = execFileSync("perf", ["bench", "sched", "pipe", "-l", "20000"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      const m = /([\d.]+) usecs\/op/.exec(out);
      return m ? Number(m[1]) : Number.NaN;
    });
    const best = Math.min(...runs);
    return Number.isFinite(best) ? `process hand-off (perf bench sched pipe) ${best.toFixed(1)} µs a round trip` : "process hand-off not measured";
  } catch {
    return "process hand-off not measured (no perf)";
  }
}
