// The soak (issue 37): mixed traffic at about half of the measured capacity for a long
// time, then a money audit. Reports per service RSS at start, after warm-up, middle and
// end, p50/p99 per window, background backlog (outboxes, deliveries, relay lag) and errors.
//   pnpm soak [--minutes=30] [--window=5] [--out=docs/benchmarks/soak.md]
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { call, newTenant, REPO_ROOT, signIn, startCallbackReceiver, startTronMock, uploadRaw } from "@gateway/testkit";
import { closeoutOk, PROCS, startGateway } from "./gateway.js";
import { machine } from "./machine.js";
import { whereTheTimeGoes, type Mark } from "./soak-where.js";
import { startMock } from "./targets.js";

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`Usage: pnpm soak [--minutes=30] [--window=5] [--out=FILE] [--prior-leases=N] [--upload-expiry=120] [--rate=N]

Mixed traffic (JSON and streams, 402s and budget 409s, pushes, energy leases, file
uploads, clients that disconnect) at about half of the measured capacity, then a money
audit. Prints the report; --out writes it (pnpm soak writes docs/benchmarks/soak.md only
for a run of 30 minutes or more). Exit status 1 when a figure is out of bounds.
--upload-expiry=SECONDS (120): how long an uploaded file lives before the sweeper removes it.
--prior-leases=N: the TRON mock starts with N leases' delegations already made (a short
run with the mock as a long one leaves it: about 4 leases a second at half capacity).`);
  process.exit(0);
}
const minutes = Number(arg("minutes", "30"));
const windowMinutes = Number(arg("window", String(Math.min(5, minutes / 3))));
const out = arg("out", minutes >= 30 ? "docs/benchmarks/soak.md" : "");
const priorLeases = Number(arg("prior-leases", "0"));
// Uploads expire within the warm-up, so that every window after it pays for the sweeper's
// removals; at 600 s they began at minute 11 and the windows before measured a lighter load.
const uploadExpiry = Number(arg("upload-expiry", "120"));
const durationMs = minutes * 60_000;
const windowMs = windowMinutes * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
function must<T>(res: { status: number; body: T }, status: number, what: string): T {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const RECEIVERS = ["TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgM", "TETk6ZoJe5fGYUkrJbXYSsacympnK4fbbd", "TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYH"];
const mock = await startMock("k");
const hooks = await startCallbackReceiver();
const tron = await startTronMock();
// Leases made before this run, as orders the mock provider took (delegated at once).
for (let i = 0; i < priorLeases; i++) {
  const res = await fetch(`${tron.providerUrl}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": `job_prior_${i}` },
    body: JSON.stringify({ receiver: RECEIVERS[i % RECEIVERS.length], energy: 65_000, duration_seconds: 3_600 }),
  });
  await res.arrayBuffer();
}
const gateway = await startGateway(
  mock.url,
  "k",
  {},
  {
    // SOAK_EDGE_ENV: the edge's extra environment as JSON, e.g. bench/src/window-probe.mjs preloaded, to profile it early and late.
    edge: JSON.parse(process.env.SOAK_EDGE_ENV ?? "{}") as Record<string, string>,
    // Push targets are local: the SSRF checks are for customer URLs (test mode allows them).
    messaging: { NODE_ENV: "test", ALLOW_PRIVATE_TARGETS: "true" },
    jobs: {
      TRON_MODE: "live",
      TRON_PROVIDER_URL: tron.providerUrl,
      TRON_NODE_URL: tron.nodeUrl,
      TRON_VERIFY_POLL_MS: "200",
      // SOAK_JOBS_NODE_OPTIONS: e.g. "--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=/tmp/heap", to diff jobs' heap early and late.
      ...(process.env.SOAK_JOBS_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SOAK_JOBS_NODE_OPTIONS } : {}),
    },
  },
);
const { stack } = gateway;
const admin = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
const credit = async (tenantId: string, units: number) =>
  must(await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${tenantId}/credits`, { token: admin, body: { units, reason: "soak" } }), 201, "credit");
const keyOf = async (token: string, body: Record<string, unknown>) =>
  must(await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", { token, body }), 201, "key").data.key;
const aiInstance = async (token: string) =>
  must(
    await call(stack.edgeUrl, "POST", "/console/services", {
      token,
      body: { service_id: "ai-model", alias: "bench", status: "active", config: { mode: "managed", default_model: "bench-small" } },
    }),
    201,
    "instance",
  );

// The tenants: the benchmark's own (JSON, streams, cuts), one with no balance (402), one
// whose key has a small daily budget (409 once spent), one pushing, one leasing, one uploading.
const poor = await newTenant(stack.edgeUrl, "soak-poor");
await aiInstance(poor.token);
const poorKey = await keyOf(poor.token, { name: "poor", scopes: ["ai:invoke"] });
const budgeted = await newTenant(stack.edgeUrl, "soak-budget");
await credit(budgeted.tenantId, 100_000_000);
await aiInstance(budgeted.token);
const budgetKey = await keyOf(budgeted.token, { name: "budget", scopes: ["ai:invoke"], budget_units: 2_000, budget_period: "day" });
const pusher = await newTenant(stack.edgeUrl, "soak-push");
await credit(pusher.tenantId, 100_000_000);
must(
  await call(stack.edgeUrl, "POST", "/console/services", {
    token: pusher.token,
    body: {
      service_id: "webhook-push",
      alias: "alerts",
      status: "active",
      config: { targets: [{ id: "a", type: "webhook", url: `${hooks.url}/a`, enabled: true }] },
    },
  }),
  201,
  "push instance",
);
const pushKey = await keyOf(pusher.token, { name: "push", scopes: ["push:send"] });
const leaser = await newTenant(stack.edgeUrl, "soak-lease");
await credit(leaser.tenantId, 1_000_000_000);
const leaseKey = await keyOf(leaser.token, { name: "lease", scopes: ["tron:lease", "jobs:read"] });
const uploader = await newTenant(stack.edgeUrl, "soak-files");
const fileKey = await keyOf(uploader.token, { name: "files", scopes: ["file:write", "file:read"] });
const allTenants = [gateway.tenant.tenantId, budgeted.tenantId, pusher.tenantId, leaser.tenantId];

const chatUrl = `${gateway.url}/v1/apps/ai/bench/v1/chat/completions`;
const chat = (stream: boolean) =>
  JSON.stringify({
    model: "bench-small",
    messages: [{ role: "user", content: "Tell me about holds and captures." }],
    max_tokens: 40,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });

type Kind = "json" | "stream" | "stream-cut" | "402" | "budget" | "push" | "lease" | "upload";
/** Share of each kind, and the answers it may get. */
const MIX: [Kind, number, number[]][] = [
  ["json", 45, [200]],
  ["stream", 20, [200]],
  ["stream-cut", 8, [200]],
  ["402", 5, [402]],
  ["budget", 5, [200, 409]],
  ["push", 8, [200]],
  ["lease", 4, [202]],
  ["upload", 5, [201]],
];
const totalWeight = MIX.reduce((n, [, w]) => n + w, 0);
let seed = 37;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
const pick = (): [Kind, number[]] => {
  let r = random() * totalWeight;
  for (const [kind, w, ok] of MIX) {
    r -= w;
    if (r < 0) return [kind, ok];
  }
  return ["json", [200]];
};

const aiHeaders = (key: string) => ({ "x-api-key": key, "content-type": "application/json" });
/** One request of a kind: its status (0: no answer), after the body was read or the client went away. */
async function run(kind: Kind): Promise<number> {
  switch (kind) {
    case "json":
    case "402":
    case "budget": {
      const key = kind === "json" ? gateway.key : kind === "402" ? poorKey : budgetKey;
      const res = await fetch(chatUrl, { method: "POST", headers: aiHeaders(key), body: chat(false) });
      await res.arrayBuffer();
      return res.status;
    }
    case "stream": {
      const res = await fetch(chatUrl, { method: "POST", headers: aiHeaders(gateway.key), body: chat(true) });
      const text = await res.text();
      return res.status === 200 && !text.includes("[DONE]") ? -1 : res.status;
    }
    case "stream-cut": {
      // A client that goes away after the first piece of the stream.
      const abort = new AbortController();
      const res = await fetch(chatUrl, { method: "POST", headers: aiHeaders(gateway.key), body: chat(true), signal: abort.signal });
      const reader = res.body!.getReader();
      await reader.read();
      abort.abort();
      await reader.cancel().catch(() => undefined);
      return res.status;
    }
    case "push": {
      const res = await call(stack.edgeUrl, "POST", "/v1/apps/webhook-push/alerts/send", {
        headers: { "X-API-Key": pushKey },
        body: { title: "Soak", text: "still here" },
      });
      return res.status;
    }
    case "lease": {
      const receiver = RECEIVERS[Math.floor(random() * RECEIVERS.length)];
      const q = await call(stack.edgeUrl, "POST", "/v1/apps/tron/quote", {
        headers: { "X-API-Key": leaseKey },
        body: { receiver, energy: 65_000, duration_seconds: 3_600 },
      });
      if (q.status !== 200) return q.status;
      const d = q.body.data;
      const res = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", {
        headers: { "X-API-Key": leaseKey },
        body: { quote_id: d.quote_id, max_cost: d.cost, receiver: d.receiver, energy: d.energy, duration_seconds: d.duration_seconds },
      });
      return res.status;
    }
    case "upload": {
      const r = await uploadRaw(stack.edgeUrl, {
        key: fileKey,
        size: 16 * 1024 + Math.floor(random() * 112 * 1024),
        seed: 5,
        headers: { "x-filename": "soak.bin", "x-expires-in": String(uploadExpiry) },
      });
      return "aborted" in r ? 0 : r.status;
    }
  }
}

// Capacity: the same mix, closed loop (each of 32 clients sends its next request when the
// last one is answered), for 20 s after 10 s of warming; the soak runs at half of it.
async function closedLoop(clients: number, ms: number): Promise<number> {
  let answered = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        await run(pick()[0]).catch(() => 0);
        answered++;
      }
    }),
  );
  return answered / (ms / 1000);
}
await closedLoop(16, 10_000);
const capacity = await closedLoop(32, 20_000);
// --rate=N: send N req/s whatever the capacity (an A/B pair of runs at the same rate).
const rate = Number(arg("rate", "0")) || Math.max(5, Math.round(capacity / 2));
console.log(`capacity ${capacity.toFixed(0)} req/s (the mix, 32 clients, closed loop): soak at ${rate} req/s for ${minutes} min`);

// Samples: RSS of each service and the background backlog, every 30 s.
const rssOf = (pid: number | undefined) => {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};
type Sample = { at: number; rss: Record<string, number>; backlog: Record<string, number> };
const count = async (service: (typeof PROCS)[number], sql: string) => Number((await stack.sql<{ n: string }>(service, sql))[0]?.n ?? 0);
let samplingFailures = 0;
/** A sample; when the database refuses the benchmark's own queries (a shared server), the last one again. */
async function sample(at: number): Promise<Sample> {
  try {
    return await takeSample(at);
  } catch (err) {
    samplingFailures++;
    console.error(`sample at ${Math.round(at / 1000)} s failed: ${(err as Error).message}`);
    const last = samples.at(-1)!;
    return { ...last, at };
  }
}
async function takeSample(at: number): Promise<Sample> {
  const rss = Object.fromEntries(PROCS.map((p) => [p, rssOf(stack.process(p).pid)]));
  const backlog: Record<string, number> = {};
  for (const p of PROCS) backlog[`${p} outbox`] = await count(p, "SELECT count(*)::text AS n FROM outbox_events");
  backlog["push deliveries open"] = await count("messaging", "SELECT count(*)::text AS n FROM push_deliveries WHERE finished_at IS NULL");
  backlog["ledger relay lag"] = await count(
    "ledger",
    "SELECT count(*)::text AS n FROM ledger_events WHERE seq > coalesce((SELECT position FROM relay_checkpoints WHERE name = 'ledger_events'), 0)",
  );
  backlog["managed-ai relay lag"] = await count(
    "managed-ai",
    "SELECT count(*)::text AS n FROM usage_record_events WHERE seq > coalesce((SELECT position FROM relay_checkpoints WHERE name = 'usage_record_events'), 0)",
  );
  return { at, rss, backlog };
}

const windows = Math.max(1, Math.round(durationMs / windowMs));
const latencies: Map<Kind, number[]>[] = Array.from({ length: windows }, () => new Map());
const answers: Record<string, number> = {};
const errors: Record<string, number> = {};
const samples: Sample[] = [];
let inFlight = 0;
let answeredCount = 0;
let skipped = 0;
let issued = 0;
const maxInFlight = 512;
const started = performance.now();
const pending = new Set<Promise<void>>();
const one = (kind: Kind, ok: number[]) => {
  const t0 = performance.now();
  inFlight++;
  const p = run(kind)
    .then(
      (status) => {
        const w = Math.min(windows - 1, Math.floor((t0 - started) / windowMs));
        answers[`${kind} ${status}`] = (answers[`${kind} ${status}`] ?? 0) + 1;
        if (!ok.includes(status)) errors[`${kind} ${status}`] = (errors[`${kind} ${status}`] ?? 0) + 1;
        else {
          const list = latencies[w]!.get(kind) ?? [];
          list.push(performance.now() - t0);
          latencies[w]!.set(kind, list);
        }
      },
      (err: unknown) => {
        const key = `${kind} ${(err as Error).message}`;
        errors[key] = (errors[key] ?? 0) + 1;
      },
    )
    .finally(() => {
      inFlight--;
      answeredCount++;
      pending.delete(p);
    });
  pending.add(p);
};

const where = await whereTheTimeGoes(gateway);
const marks: Mark[] = [await where.mark(0, 0)];
samples.push(await sample(0));
let nextSample = 30_000;
let nextMark = windowMs;
for (;;) {
  const elapsed = performance.now() - started;
  if (elapsed >= durationMs) break;
  const due = Math.floor((elapsed / 1000) * rate);
  while (issued < due) {
    issued++;
    if (inFlight >= maxInFlight) {
      skipped++;
      continue;
    }
    const [kind, ok] = pick();
    one(kind, ok);
  }
  if (elapsed >= nextSample) {
    nextSample += 30_000;
    samples.push(await sample(elapsed));
  }
  if (elapsed >= nextMark && nextMark < durationMs) {
    nextMark += windowMs;
    marks.push(await where.mark(elapsed, answeredCount));
  }
  await sleep(10);
}
await Promise.all(pending);
marks.push(await where.mark(performance.now() - started, answeredCount));
samples.push(await sample(performance.now() - started));

// Quiet: the backlog must drain; then the money audit.
const drainStart = Date.now();
let drained = samples.at(-1)!;
while (Object.values(drained.backlog).some((n) => n > 0) && Date.now() - drainStart < 120_000) {
  await sleep(1_000);
  drained = await sample(performance.now() - started);
}
const closeout = await gateway.closeout(180_000);
// A fresh session: the first one has expired over the run (ACCESS_TOKEN_TTL_SECONDS).
const auditor = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
// Every tenant's reservations end (leases captured or voided, pushes captured), and the
// tenant whose key has a budget was charged exactly what its completed records say.
let reservedLeft = 0n;
const auditEnd = Date.now() + 120_000;
for (;;) {
  reservedLeft = 0n;
  for (const t of allTenants) {
    const b = must(await call<{ data: { reserved_units: number } }>(stack.edgeUrl, "GET", `/ops/ledger/tenants/${t}`, { token: auditor }), 200, "balance");
    reservedLeft += BigInt(b.data.reserved_units);
  }
  if (reservedLeft === 0n || Date.now() > auditEnd) break;
  await sleep(1_000);
}
const [budgetCharged] = await stack.sql<{ units: string | null }>(
  "managed-ai",
  "SELECT sum(final_units)::text AS units FROM usage_records WHERE tenant_id = $1 AND status = 'completed'",
  [budgeted.tenantId],
);
const budgetBalance = must(
  await call<{ data: { available_units: number; reserved_units: number } }>(stack.edgeUrl, "GET", `/ops/ledger/tenants/${budgeted.tenantId}`, {
    token: auditor,
  }),
  200,
  "balance",
).data;
const budgetDrift = 100_000_000n - BigInt(budgetBalance.available_units) - BigInt(budgetBalance.reserved_units) - BigInt(budgetCharged?.units ?? "0");
const pushesDelivered = hooks.received.length;
const pushCharged = await stack.sql<{ n: string }>(
  "ledger",
  "SELECT coalesce(sum(units), 0)::text AS n FROM transfers WHERE tenant_id = $1 AND kind = 'capture'",
  [pusher.tenantId],
);
const leasesDone = await stack
  .sql<{ status: string; n: string }>("jobs", "SELECT status, count(*)::text AS n FROM jobs WHERE tenant_id = $1 GROUP BY status", [leaser.tenantId])
  .catch(() => []);

// Process health: no exit, no error or fatal line.
const exits = PROCS.filter((p) => stack.process(p).exits.length > 0 || !stack.process(p).running);
const errorLines = Object.fromEntries(PROCS.map((p) => [p, stack.process(p).lines.filter((l) => l.level === "error" || l.level === "fatal").length]));
const errorSamples = PROCS.flatMap((p) => [
  ...new Set(
    stack
      .process(p)
      .lines.filter((l) => l.level === "error" || l.level === "fatal")
      .map((l) => `${p}: ${String(l.msg ?? "")} ${JSON.stringify(l.err ?? l.error ?? "").slice(0, 200)}`),
  ),
]).slice(0, 12);
const errorLineCount = Object.values(errorLines).reduce((a, b) => a + b, 0);

const pct = (list: number[], p: number) => {
  const s = [...list].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const kinds = MIX.map(([k]) => k).filter((k) => latencies.some((w) => (w.get(k)?.length ?? 0) > 0));
const warmIndex = samples.findIndex((s) => s.at >= windowMs);
const at = (ms: number) => samples.reduce((best, s) => (Math.abs(s.at - ms) < Math.abs(best.at - ms) ? s : best), samples[0]!);
const points = { start: samples[0]!, "after warm-up": samples[warmIndex >= 0 ? warmIndex : 0]!, middle: at(durationMs / 2), end: samples.at(-1)! };
const growth = (p: string) => points.end.rss[p]! / Math.max(1, points["after warm-up"].rss[p]!) - 1;
const maxGrowth = Math.max(...PROCS.map(growth));
const drift = (k: Kind) => pct(latencies.at(-1)!.get(k) ?? [], 99) / Math.max(0.001, pct(latencies[0]!.get(k) ?? [], 99)) - 1;
const driftKinds: Kind[] = ["json", "stream"];
const maxDrift = Math.max(...driftKinds.map(drift));
const errorCount = Object.values(errors).reduce((a, b) => a + b, 0) + skipped + exits.length + errorLineCount;
const moneyOk = closeoutOk(closeout) && reservedLeft === 0n && budgetDrift === 0n;
const pass = maxGrowth <= 0.1 && maxDrift <= 0.2 && errorCount === 0 && moneyOk;

const fmt = (n: number) => n.toFixed(n < 10 ? 1 : 0);
const lines: string[] = [];
lines.push(`# Soak: ${minutes} minutes of mixed traffic, then a money audit`);
lines.push("");
lines.push(
  `Made by \`pnpm soak\` (\`bench/src/soak.ts\`) on ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, ${machine()}. ` +
    `Load average (1 min) when this report was written: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores; say in the notes what else ran beside it.`,
);
lines.push("");
lines.push("## Verdict");
lines.push("");
lines.push(`| Figure | Acceptable | Measured | |`);
lines.push(`|---|---|---|---|`);
lines.push(`| RSS growth after warm-up (largest of the services) | ≤ 10 % | ${(maxGrowth * 100).toFixed(1)} % | ${maxGrowth <= 0.1 ? "ok" : "**over**"} |`);
lines.push(
  `| p99 drift, first vs last window (${driftKinds.join(", ")}; largest) | ≤ 20 % | ${(maxDrift * 100).toFixed(1)} % | ${maxDrift <= 0.2 ? "ok" : "**over**"} |`,
);
lines.push(`| Errors (unexpected answers, requests not sent, exits, error lines) | 0 | ${errorCount} | ${errorCount === 0 ? "ok" : "**not 0**"} |`);
lines.push(`| Money drift | 0 | ${moneyOk ? "0" : "**see the audit**"} | ${moneyOk ? "ok" : "**not 0**"} |`);
lines.push("");
lines.push("## Load");
lines.push("");
lines.push(
  `Capacity measured first: ${fmt(capacity)} req/s of this mix from 32 clients, each sending its next request when the last is answered (20 s). ` +
    `The soak sends ${rate} req/s (${Number(arg("rate", "0")) ? "--rate" : "half of it"}), open loop, for ${minutes} minutes: ${issued} requests, at most ${maxInFlight} in flight.` +
    (priorLeases > 0 ? ` The TRON mock started with ${priorLeases} earlier leases' delegations (--prior-leases).` : ""),
);
lines.push("");
lines.push(`| Kind | Share | Answers |`);
lines.push(`|---|---|---|`);
for (const [kind, w] of MIX)
  lines.push(
    `| ${kind} | ${w} % | ${Object.entries(answers)
      .filter(([k]) => k.startsWith(`${kind} `))
      .map(([k, v]) => `${k.slice(kind.length + 1)}: ${v}`)
      .join(", ")} |`,
  );
lines.push("");
lines.push(
  "json and stream: the benchmark's tenant (metered: key policy, reservation, allotments); stream-cut: a stream the client drops after its first piece; " +
    "402: a tenant with no balance; budget: a key with a daily budget of 2,000 units (200 until spent, then 409); push: a webhook push to a local receiver; " +
    "lease: a quote, then an energy lease (live mode against the local TRON mock); upload: 16–128 KiB files, " +
    `which expire after ${uploadExpiry} s (the files sweeper removes them once a minute).`,
);
lines.push("");
lines.push(`## Latency per ${windowMinutes}-minute window (ms, answered as expected)`);
lines.push("");
lines.push(`| Kind | ${latencies.map((_, i) => `${i * windowMinutes}–${(i + 1) * windowMinutes} min p50 / p99`).join(" | ")} |`);
lines.push(`|---|${latencies.map(() => "---").join("|")}|`);
for (const k of kinds) lines.push(`| ${k} | ${latencies.map((w) => `${fmt(pct(w.get(k) ?? [], 50))} / ${fmt(pct(w.get(k) ?? [], 99))}`).join(" | ")} |`);
lines.push("");
lines.push("## Memory (RSS, MiB)");
lines.push("");
lines.push(`| Service | ${Object.keys(points).join(" | ")} | growth after warm-up |`);
lines.push(
  `|---|${Object.keys(points)
    .map(() => "---")
    .join("|")}|---|`,
);
for (const p of PROCS)
  lines.push(
    `| ${p} | ${Object.values(points)
      .map((s) => fmt(s.rss[p]!))
      .join(" | ")} | ${(growth(p) * 100).toFixed(1)} % |`,
  );
lines.push("");
lines.push(
  `Warm-up: the first window (${windowMinutes} min). Sampled every 30 s at ${Object.values(points)
    .map((s) => `${fmt(s.at / 60_000)} min`)
    .join(", ")}.`,
);
lines.push("");
lines.push(...where.report(marks));
lines.push("## Background backlog");
lines.push("");
const backlogKeys = Object.keys(samples[0]!.backlog);
lines.push(`| | ${backlogKeys.join(" | ")} |`);
lines.push(`|---|${backlogKeys.map(() => "---").join("|")}|`);
lines.push(`| largest during the run | ${backlogKeys.map((k) => Math.max(...samples.map((s) => s.backlog[k]!))).join(" | ")} |`);
lines.push(`| at the end of the load | ${backlogKeys.map((k) => samples.at(-1)!.backlog[k]).join(" | ")} |`);
lines.push(`| ${Math.round((Date.now() - drainStart) / 1000)} s later | ${backlogKeys.map((k) => drained.backlog[k]).join(" | ")} |`);
lines.push("");
lines.push("Outbox: events committed and not yet published; push deliveries open: targets not yet answered; relay lag: log events not yet published.");
lines.push("");
lines.push("## Errors");
lines.push("");
lines.push(
  `- Unexpected answers: ${
    Object.keys(errors).length === 0
      ? "none"
      : Object.entries(errors)
          .map(([k, v]) => `${k}: ${v}`)
          .join(", ")
  }`,
);
lines.push(`- Samples that could not be taken (kept the one before): ${samplingFailures}`);
lines.push(`- Requests not sent (more than ${maxInFlight} in flight): ${skipped}`);
lines.push(`- Processes that exited: ${exits.length === 0 ? "none" : exits.join(", ")}`);
lines.push(
  `- Error or fatal log lines: ${Object.entries(errorLines)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ")}`,
);
for (const e of errorSamples) lines.push(`  - ${e}`);
lines.push("");
lines.push("## Money audit");
lines.push("");
lines.push(
  `- Metered tenant: ${closeout.allotments.opened} allotments opened, ${closeout.allotments.notClosed} not closed after ${closeout.waitedSeconds} s; ` +
    `${closeout.records.completed} completed records charging ${closeout.records.charged} units; the journal posted ${closeout.journal.postedUnits} and captured ${closeout.journal.capturedUnits}; ` +
    `balance drop ${closeout.journal.balanceDrop}; reserved ${closeout.journal.reserved}; invariant ${closeout.invariantOk ? "ok" : "BROKEN"}: ${closeoutOk(closeout) ? "agrees" : "**disagrees**"}.`,
);
lines.push(`- Budget tenant: balance drop minus completed charges = ${budgetDrift} units.`);
lines.push(`- Units still reserved over every tenant after the run: ${reservedLeft}.`);
lines.push(`- Pushes delivered to the receiver: ${pushesDelivered}; captured for them: ${pushCharged[0]?.n ?? 0} units.`);
lines.push(`- Leases by job status: ${leasesDone.map((r) => `${r.status} ${r.n}`).join(", ") || "none"}.`);
lines.push("");
lines.push(`Verdict: ${pass ? "**pass**" : "**fail**"}.`);
const report = lines.join("\n");
console.log(report);
// What follows KEEP_BELOW in the file (studies of earlier runs) stays when the report above it is rewritten.
const KEEP_BELOW = "<!-- pnpm soak keeps what follows when it rewrites the report above. -->";
if (out) {
  const path = join(REPO_ROOT, out);
  const previous = existsSync(path) ? readFileSync(path, "utf8") : "";
  const kept = previous.includes(KEEP_BELOW) ? previous.slice(previous.indexOf(KEEP_BELOW)) : "";
  writeFileSync(path, kept ? `${report}\n\n${kept}` : `${report}\n`);
}

await gateway.stop();
await mock.stop();
await hooks.close();
await tron.close();
process.exit(pass ? 0 : 1);
