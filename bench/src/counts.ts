// Work per metered request that does not depend on the machine's load: Redis
// commands (sent by clients, and run inside scripts), PostgreSQL transactions per
// service database, JSON.parse calls, express router layers and the KiB the
// JavaScript heap allocated per process, and the edge's system calls. Usage:
//   pnpm --filter @gateway/bench exec tsx src/counts.ts [requests] [json|stream] [connections] [--strace]
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { body } from "./compare.js";
import { startGateway } from "./gateway.js";
import { load } from "./load.js";
import { startMock } from "./targets.js";

const requests = Number(process.argv[2] ?? 1000);
const mode = (process.argv[3] ?? "json") as "json" | "stream";
const connections = Number(process.argv[4] ?? 32);
const withStrace = process.argv.includes("--strace");
const dir = mkdtempSync(join(tmpdir(), "gw-counts-"));
const env = { COUNTS_DIR: dir, NODE_OPTIONS: `--import ${fileURLToPath(new URL("./counters.mjs", import.meta.url))}` };
const mock = await startMock("k");
const gw = await startGateway(mock.url, "k", env);
const services = ["edge", "managed-ai", "ledger", "jobs"] as const;
const url = `${gw.url}/v1/apps/ai/bench/v1/chat/completions`;
const headers = { "content-type": "application/json", "x-api-key": gw.key };
await load({ label: "warm", url, connections, durationSeconds: 0, amount: 300, method: "POST", headers, body: body(mode, "bench-small") });
await new Promise((r) => setTimeout(r, 1500)); // let the outboxes and batches settle

const snapshotCounts = async () => {
  for (const name of services) process.kill(gw.stack.process(name).pid!, "SIGUSR2");
  await new Promise((r) => setTimeout(r, 300));
  const out = new Map<string, Record<string, number>>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".json")))
    out.set(file.split("-").slice(0, -1).join("-"), JSON.parse(readFileSync(join(dir, file), "utf8")) as Record<string, number>);
  return out;
};
const transactions = async () => {
  const out = new Map<string, number>();
  for (const name of services) {
    const [row] = await gw.stack.sql<{ n: string }>(
      name,
      "SELECT (xact_commit + xact_rollback)::text AS n FROM pg_stat_database WHERE datname = current_database()",
    );
    out.set(name, Number(row!.n));
  }
  return out;
};

// Redis: every command with this stack's key prefix, as MONITOR sees it (the machine's Redis is shared).
const prefix = gw.stack.namespace;
const monitor = spawn("redis-cli", ["monitor"], { stdio: ["ignore", "pipe", "ignore"] });
const redis = new Map<string, number>();
let buffered = "";
monitor.stdout.on("data", (chunk: Buffer) => {
  buffered += chunk.toString();
  const lines = buffered.split("\n");
  buffered = lines.pop()!;
  for (const line of lines) {
    if (!line.includes(`"${prefix}:`)) continue;
    const m = /\[\d+ (\S+)\] "([^"]+)"/.exec(line);
    if (!m) continue;
    const name = `${m[1] === "lua" ? "in script" : "sent"} ${m[2]!.toUpperCase()}`;
    redis.set(name, (redis.get(name) ?? 0) + 1);
  }
});
await new Promise((r) => setTimeout(r, 300));
const strace = withStrace
  ? spawn("strace", ["-f", "-c", "-p", String(gw.stack.process("edge").pid), "-o", join(dir, "strace.txt")], { stdio: "ignore" })
  : undefined;
if (strace) await new Promise((r) => setTimeout(r, 1000));

const before = { counts: await snapshotCounts(), tx: await transactions() };
const r = await load({ label: "counted", url, connections, durationSeconds: 0, amount: requests, method: "POST", headers, body: body(mode, "bench-small") });
await new Promise((r) => setTimeout(r, 1500)); // settlements and releases that follow the answers
const after = { counts: await snapshotCounts(), tx: await transactions() };
monitor.kill("SIGINT");
if (strace) {
  strace.kill("SIGINT");
  await new Promise((r) => strace.once("exit", r));
}
const per = (n: number) => (n / requests).toFixed(2);
console.log(`${mode}, ${connections} connections, ${requests} requests: ${r.ok} ok`);
console.log("Redis commands per request:");
for (const [name, n] of [...redis].sort()) console.log(`  ${per(n).padStart(6)}  ${name}`);
console.log("PostgreSQL transactions per request (by service database; each count query adds 2 in all):");
for (const name of services) console.log(`  ${per(after.tx.get(name)! - before.tx.get(name)!).padStart(6)}  ${name}`);
console.log("Per process, per request:");
for (const [name, a] of after.counts) {
  const b = before.counts.get(name) ?? {};
  console.log(
    `  ${name}: ${Object.entries(a)
      .map(([k, v]) => `${k} ${per(v - (b[k] ?? 0))}`)
      .join(", ")}`,
  );
}
if (strace) {
  const text = readFileSync(join(dir, "strace.txt"), "utf8");
  const rows = text.split("\n").filter((l) => /^\s*[\d.]+\s+[\d.]+\s+\d+\s+\d+/.test(l) || /^\s*[\d.]+\s+[\d.]+\s+\d+\s+\d+\s+\d*\s*\w+$/.test(l));
  console.log("edge system calls per request (strace -c, whole window, includes timers and the outbox poller):");
  for (const l of rows) {
    const f = l.trim().split(/\s+/);
    const name = f.at(-1)!;
    const calls = Number(f[3]);
    if (calls / requests >= 0.05) console.log(`  ${per(calls).padStart(6)}  ${name}`);
  }
  const total = /([\d.]+)\s+[\d.]+\s+(\d+)\s+\d*\s*total/.exec(text);
  if (total) console.log(`  ${per(Number(total[2]))}  total`);
}
await gw.stop();
await mock.stop();
