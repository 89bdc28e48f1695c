// managed-ai's parse of a chat body (validation, pass-through, input bound) in two builds,
// alone: µs per parse, the median of 5 runs of 50,000, both builds in one process, A B B A.
// The body is the benchmark's JSON request (bench/src/compare.ts), then an agent's tool turn.
//   node bench/src/chat-parse.mjs <apps root A> <apps root B>
// e.g. node bench/src/chat-parse.mjs /tmp/gw-steps/<commit> .   (both built)
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

if (process.argv.includes("--help") || process.argv.includes("-h") || process.argv.length < 4) {
  console.log(`Usage: node bench/src/chat-parse.mjs <root A> <root B>

Times managed-ai's parseChatRequest (apps/managed-ai/dist/domain/invocation/chat-request.js)
of two built checkouts on the same bodies, A B B A, and prints µs per parse (median of 5).`);
  process.exit(process.argv.length < 4 && !process.argv.includes("--help") && !process.argv.includes("-h") ? 2 : 0);
}

const load = async (root) => (await import(pathToFileURL(resolve(root, "apps/managed-ai/dist/domain/invocation/chat-request.js")).href)).parseChatRequest;
const roots = process.argv.slice(2, 4);
const parsers = await Promise.all(roots.map(load));

const plain = { model: "bench-small", messages: [{ role: "user", content: "Say hello to the benchmark" }], max_tokens: 16 };
const toolTurn = {
  model: "bench-small",
  max_tokens: 64,
  tools: [
    {
      type: "function",
      function: {
        name: "get_weather",
        description: "The weather now in a city.",
        parameters: { type: "object", properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } }, required: ["city"] },
      },
    },
  ],
  messages: [
    { role: "system", content: "Use the tools." },
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
    { role: "tool", tool_call_id: "call_1", content: '{"temp_c":21}' },
  ],
};

const N = 50_000;
function time(parse, text) {
  const runs = [];
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    // As in the service: the bytes are parsed from JSON, then read.
    for (let i = 0; i < N; i++) parse(JSON.parse(text));
    runs.push(Number(process.hrtime.bigint() - t) / 1e3 / N);
  }
  return runs.sort((a, b) => a - b)[2];
}

for (const [name, body] of [
  ["plain text (the benchmark's body)", plain],
  ["a tool turn", toolTurn],
]) {
  const text = JSON.stringify(body);
  const results = [[], []];
  for (const i of [0, 1, 1, 0]) {
    try {
      results[i].push(time(parsers[i], text));
    } catch (err) {
      results[i].push(Number.NaN);
      if (!String(err?.message).includes("not supported")) throw err;
    }
  }
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  console.log(`${name}: A ${mean(results[0]).toFixed(2)} µs · B ${mean(results[1]).toFixed(2)} µs per parse (NaN: refused)`);
}
