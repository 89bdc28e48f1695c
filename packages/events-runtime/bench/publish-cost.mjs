// The client-side cost of a JetStream publish: nats.js's js.publish against the kit's
// JetStreamPublisher, batches of 100 in flight as a relay sends them, interleaved (A B B A ...).
// Counts the NatsErrors nats.js builds (each an Error with a stack capture) and measures this
// process's CPU per publish (user + system; noisy on a shared machine: compare within one run).
//   pnpm --filter @gateway/events-runtime build && node packages/events-runtime/bench/publish-cost.mjs [rounds] [perRound]
import { randomBytes } from "node:crypto";
import { headers, NatsError } from "nats";
import { subjectsFor } from "@gateway/events";
import { connectNats, ensureStream, JetStreamPublisher } from "../dist/index.js";

const rounds = Number(process.argv[2] ?? 4);
const perRound = Number(process.argv[3] ?? 5_000);
const nc = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", "publish-cost");
const jsm = await nc.jetstreamManager();
const subjects = subjectsFor(`pc${randomBytes(3).toString("hex")}`);
await ensureStream(jsm, subjects);
const subject = subjects.subject("ledger.credited");
const body = new TextEncoder().encode(
  JSON.stringify({
    id: "evt_x",
    type: "ledger.credited",
    source: "bench",
    occurred_at: new Date().toISOString(),
    request_id: null,
    data: { tenant_id: "ten_1" },
  }),
);
const js = nc.jetstream();
const publisher = new JetStreamPublisher(nc);
// "no stacks": the same js.publish with V8's stack capture off for the whole run
// (Error.stackTraceLimit = 0): the share of its cost that is the NatsError's stack trace.
const clients = { "js.publish": js, "js.publish, no stacks": js, JetStreamPublisher: publisher };

let errors = 0;
const errorForCode = NatsError.errorForCode;
NatsError.errorForCode = (...args) => {
  errors++;
  return errorForCode(...args);
};

let n = 0;
async function measure(name) {
  const client = clients[name];
  errors = 0;
  const limit = Error.stackTraceLimit;
  if (name.endsWith("no stacks")) Error.stackTraceLimit = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < perRound; i += 100) {
    await Promise.all(Array.from({ length: 100 }, () => client.publish(subject, body, { msgID: `evt_${++n}`, headers: headers(), timeout: 5_000 })));
  }
  const used = process.cpuUsage(cpu);
  Error.stackTraceLimit = limit;
  return { name, cpuUsPerPublish: (used.user + used.system) / perRound, wallMs: performance.now() - started, natsErrorsPerPublish: errors / perRound };
}

await measure("js.publish"); // warm-up
await measure("JetStreamPublisher");
const results = { "js.publish": [], "js.publish, no stacks": [], JetStreamPublisher: [] };
for (let r = 0; r < rounds; r++) {
  const names = Object.keys(results);
  const order = r % 2 === 0 ? names : names.reverse();
  for (const name of order) results[name].push(await measure(name));
}
for (const [name, rs] of Object.entries(results)) {
  const cpu = rs.map((r) => r.cpuUsPerPublish).sort((a, b) => a - b);
  console.log(
    `${name.padEnd(24)} CPU µs/publish median ${cpu[Math.floor(cpu.length / 2)].toFixed(1)} (runs ${cpu.map((c) => c.toFixed(1)).join(" ")}), NatsErrors per publish ${rs[0].natsErrorsPerPublish}`,
  );
}
publisher.close();
await jsm.streams.delete(subjects.stream);
await nc.drain();
