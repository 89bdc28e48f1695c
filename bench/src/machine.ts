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
  return `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${pg}, ${redis}`;
}
