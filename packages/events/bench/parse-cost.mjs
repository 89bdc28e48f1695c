// CPU per consumed event of the envelope check: parseEnvelope (envelope + payload through the
// catalog's zod schemas) against parseEnvelopeShape (plain type checks), JSON.parse included.
//   pnpm --filter @gateway/events build && node packages/events/bench/parse-cost.mjs [n]
import { parseEnvelope, parseEnvelopeShape } from "../dist/index.js";

const n = Number(process.argv[2] ?? 200_000);
const text = JSON.stringify({
  id: "evt_01JDXAMPLE",
  type: "ledger.credited",
  source: "ledger",
  occurred_at: new Date().toISOString(),
  request_id: "req_01JDXAMPLE",
  data: { tenant_id: "ten_1", entry_id: "ent_1", operation_id: "capture:rec_1", units: "1200", available_units: "98800", reason: "capture" },
});
function measure(parse) {
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) parse(JSON.parse(text));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / n;
}
for (const parse of [parseEnvelope, parseEnvelopeShape]) measure(parse); // warm-up
const rows = { parseEnvelope: [], parseEnvelopeShape: [] };
for (let r = 0; r < 4; r++)
  for (const parse of r % 2 ? [parseEnvelopeShape, parseEnvelope] : [parseEnvelope, parseEnvelopeShape]) rows[parse.name].push(measure(parse));
for (const [name, us] of Object.entries(rows)) console.log(`${name.padEnd(20)} µs/event ${us.map((u) => u.toFixed(2)).join(" ")}`);
