// Where the CPU of a metered request goes: every service runs with a V8 CPU
// profiler, a fixed load is sent, and self time is summed per package and per
// function. Usage: pnpm --filter @gateway/bench exec tsx src/profile.ts [requests] [json|stream]
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { body } from "./compare.js";
import { startGateway } from "./gateway.js";
import { load } from "./load.js";
import { startMock } from "./targets.js";

const requests = Number(process.argv[2] ?? 3000);
const mode = (process.argv[3] ?? "json") as "json" | "stream";
const connections = Number(process.argv[4] ?? 32);
const dir = mkdtempSync(join(tmpdir(), "gw-profile-"));
const profiling = { PROFILE_DIR: dir, PROFILE_ON_SIGNAL: "1", NODE_OPTIONS: `--import ${fileURLToPath(new URL("./profiler.mjs", import.meta.url))}` };
const mock = await startMock("k");
const gw = await startGateway(mock.url, "k", profiling);
const url = `${gw.url}/v1/apps/ai/bench/v1/chat/completions`;
const headers = { "content-type": "application/json", "x-api-key": gw.key };
await load({ label: "warm", url, connections: 32, durationSeconds: 0, amount: 500, method: "POST", headers, body: body(mode, "bench-small") });
// The profiles start now, after the warm-up: start-up and first compilations stay out of them.
for (const name of ["edge", "managed-ai", "ledger", "jobs", "messaging", "files"] as const) {
  const pid = gw.stack.process(name).pid;
  if (pid) process.kill(pid, "SIGUSR2");
}
await new Promise((r) => setTimeout(r, 200));
const r = await load({ label: "profiled", url, connections, durationSeconds: 0, amount: requests, method: "POST", headers, body: body(mode, "bench-small") });
console.log(`${Math.round(r.requestsPerSecond)} req/s, ${r.ok} ok`);
await gw.stop();
await mock.stop();

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };
function bucket(url: string): string {
  const m = /node_modules\/\.pnpm\/([^/]+)\//.exec(url) ?? /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!.replace(/@\d.*$/, "");
  if (url.includes("/packages/")) return `@gateway/${url.split("/packages/")[1]!.split("/")[0]}`;
  if (url.includes("/apps/")) return `app:${url.split("/apps/")[1]!.split("/")[0]}`;
  if (url.startsWith("node:") || url === "") return url ? "node internals" : "(native / gc / idle)";
  return url;
}
for (const file of readdirSync(dir)) {
  const p = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile;
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  const byNode = new Map(p.nodes.map((n) => [n.id, n]));
  const perBucket = new Map<string, number>();
  const perFn = new Map<string, number>();
  let total = 0;
  for (const [id, us] of self) {
    const n = byNode.get(id)!;
    if (n.callFrame.functionName === "(idle)" || n.callFrame.functionName === "(program)") continue;
    total += us;
    const b = bucket(n.callFrame.url);
    perBucket.set(b, (perBucket.get(b) ?? 0) + us);
    const fn = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.split("/").slice(-2).join("/")}:${n.callFrame.lineNumber}`;
    perFn.set(fn, (perFn.get(fn) ?? 0) + us);
  }
  const perReq = (us: number) => (us / 1000 / requests).toFixed(3);
  console.log(`\n== ${file}: ${perReq(total)} ms CPU per request (busy)`);
  // The gRPC call's share, by the innermost frame that is not Node's own: each
  // sample goes to the first library or app frame above it (grpc-js, protobufjs,
  // our grpc-kit, or anything else); a sample under Node's frames alone counts as
  // the gRPC transport when one of them is http2 or TLS (the services speak
  // HTTP/1.1 to clients, the mock and nothing else over http2/TLS), else "other".
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const share = new Map<string, number>();
  for (const [id, us] of self) {
    const leaf = byNode.get(id)!;
    if (leaf.callFrame.functionName === "(idle)" || leaf.callFrame.functionName === "(program)") continue;
    let kind = "";
    let transport = false;
    for (let at: number | undefined = id; at !== undefined && !kind; at = parent.get(at)) {
      const url = byNode.get(at)!.callFrame.url;
      if (/internal\/http2|_tls_|internal\/tls|node:tls/.test(url)) transport = true;
      if (url === "" || url.startsWith("node:")) continue;
      kind = url.includes("@grpc/grpc-js")
        ? "grpc-js"
        : url.includes("protobufjs")
          ? "protobufjs"
          : url.includes("/packages/grpc-kit/")
            ? "@gateway/grpc-kit"
            : "rest";
    }
    if (!kind) kind = transport ? "http2/TLS (Node)" : "rest";
    share.set(kind, (share.get(kind) ?? 0) + us);
  }
  const grpcUs = [...share].filter(([k]) => k !== "rest").reduce((a, [, v]) => a + v, 0);
  console.log(
    `  gRPC call: ${perReq(grpcUs)} ms (${((grpcUs / total) * 100).toFixed(0)} %) = ` +
      [...share]
        .filter(([k]) => k !== "rest")
        .map(([k, v]) => `${k} ${perReq(v)}`)
        .join(" · "),
  );
  for (const [b, us] of [...perBucket].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${perReq(us).padStart(7)}  ${b}`);
  console.log("  top functions:");
  for (const [f, us] of [...perFn].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PROFILE_TOP ?? 10)))
    console.log(`  ${perReq(us).padStart(7)}  ${f}`);
}
