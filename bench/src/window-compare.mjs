// Compares the windows bench/src/window-probe.mjs wrote (early against late): CPU ms
// per request, GC ms per request, and the CPU profile's self time per request by
// package and by function (the largest, and those that changed most).
//   node bench/src/window-compare.mjs /tmp/probe 1 2 [top]
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [dir, a = "1", b = "2", top = "15"] = process.argv.slice(2);
if (!dir) {
  console.log("Usage: node bench/src/window-compare.mjs DIR [early=1] [late=2] [top=15]");
  process.exit(1);
}

function bucket(url) {
  const m = /node_modules\/\.pnpm\/([^/]+)\//.exec(url) ?? /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1].replace(/@\d.*$/, "");
  if (url.includes("/packages/")) return `@gateway/${url.split("/packages/")[1].split("/")[0]}`;
  if (url.includes("/apps/")) return `app:${url.split("/apps/")[1].split("/")[0]}`;
  if (url.startsWith("node:")) return "node internals";
  return url || "(native)";
}

function load(n) {
  const figures = JSON.parse(readFileSync(join(dir, `${n}.json`), "utf8"));
  const p = JSON.parse(readFileSync(join(dir, `${n}.cpuprofile`), "utf8"));
  const self = new Map();
  p.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  const byNode = new Map(p.nodes.map((x) => [x.id, x]));
  // The probe's own work (stopping the profiler) is not the service's: its subtree is left out.
  const probe = new Set();
  const mark = (id) => {
    probe.add(id);
    for (const c of byNode.get(id).children ?? []) mark(c);
  };
  for (const x of p.nodes) if (x.callFrame.url.endsWith("window-probe.mjs") && !probe.has(x.id)) mark(x.id);
  const perBucket = new Map();
  const perFn = new Map();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byNode.get(id).callFrame;
    if (functionName === "(idle)" || probe.has(id)) continue;
    const b = functionName.startsWith("(") ? functionName : bucket(url);
    perBucket.set(b, (perBucket.get(b) ?? 0) + us);
    const fn = `${functionName || "(anon)"} ${url.split("/").slice(-2).join("/")}:${lineNumber}`;
    perFn.set(fn, (perFn.get(fn) ?? 0) + us);
  }
  const perReq = (us) => us / 1000 / figures.requests;
  return { figures, perReq, perBucket, perFn };
}

const A = load(a);
const B = load(b);
const f = (x) => x.toFixed(3).padStart(7);
const gcMs = (g) => Object.values(g).reduce((s, v) => s + v.ms, 0);
for (const [name, W] of [
  [a, A],
  [b, B],
]) {
  const { figures: x } = W;
  console.log(
    `window ${name}: ${x.seconds.toFixed(0)} s, ${x.requests} requests, CPU ${(x.cpuMs / x.requests).toFixed(3)} ms/request, ` +
      `GC pauses ${(gcMs(x.gc) / x.requests).toFixed(3)} ms/request (${Object.entries(x.gc)
        .map(([k, v]) => `${k} ${v.count}× ${v.ms.toFixed(0)} ms`)
        .join(", ")}), ELU ${x.eventLoopUtilization.toFixed(3)}, heap used ${(x.heap.used_heap_size / 2 ** 20).toFixed(0)} MiB, ` +
      `old space ${(x.spaces.old_space.used / 2 ** 20).toFixed(0)} MiB, RSS ${(x.memory.rss / 2 ** 20).toFixed(0)} MiB`,
  );
  console.log(`  active resources: ${JSON.stringify(x.activeResources)}`);
}
const table = (title, ma, mb, n) => {
  console.log(`\n${title} (ms per request: early, late, change)`);
  const keys = new Set([...ma.keys(), ...mb.keys()]);
  const rows = [...keys].map((k) => [k, A.perReq(ma.get(k) ?? 0), B.perReq(mb.get(k) ?? 0)]);
  const largest = rows.sort((x, y) => y[2] - x[2]).slice(0, n);
  for (const [k, x, y] of largest) console.log(`${f(x)} ${f(y)} ${f(y - x)}  ${k}`);
  return rows;
};
table("by package", A.perBucket, B.perBucket, 14);
const fns = table("top functions", A.perFn, B.perFn, Number(top));
console.log(`\nfunctions that grew most (ms per request: early, late, change)`);
for (const [k, x, y] of fns.sort((p, q) => q[2] - q[1] - (p[2] - p[1])).slice(0, Number(top))) console.log(`${f(x)} ${f(y)} ${f(y - x)}  ${k}`);
