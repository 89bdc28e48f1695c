// Does a call carried on the long-lived stream (docs/decisions/0246) cost more as the
// stream ages? Client and server in this process over loopback, 32 calls in flight, a
// mix of unary calls (one long-lived signal, a signal each) and 3-message streams, in
// batches; per batch: CPU per call, and what the client keeps (calls pending, listeners
// on the shared signal and on the stream, timers, frames grpc-js keeps for a retry).
//   pnpm --filter @gateway/bench exec tsx ../packages/grpc-kit/bench/carried-aging.ts [batches=12] [calls=10000]
import { randomBytes } from "node:crypto";
import { getEventListeners } from "node:events";
import { createLogger } from "@gateway/logger";
import { createRegistry } from "@gateway/metrics";
import { CarriedCalls, createClient, GrpcServer, serveCarried, type CallContext } from "../src/index.js";
import { echoContract, type SayRequestOut, type SayResponse } from "../src/testdata/echo.js";

const batches = Number(process.argv[2] ?? 12);
const per = Number(process.argv[3] ?? 10_000);
const TOKEN = randomBytes(32).toString("hex");
async function say(req: SayRequestOut, ctx: CallContext): Promise<SayResponse> {
  return { text: req.text.toUpperCase(), request_id: ctx.requestId };
}
async function count(req: SayRequestOut, ctx: CallContext, send: (m: SayResponse) => Promise<void>): Promise<void> {
  for (let i = 1; i <= Number(req.text); i++) await send({ text: String(i), request_id: ctx.requestId });
}

const server = new GrpcServer({ logger: createLogger({ service: "echo", level: "silent" }), registry: createRegistry("s"), serviceToken: TOKEN });
server.add(echoContract, {
  Say: say,
  async Count() {},
  async Collect() {
    return {};
  },
  Carry: (stream) => serveCarried(server, "/test.echo.v1.Echo", { unary: { Say: say }, streaming: { Count: count } }, stream),
});
const port = await server.listen("127.0.0.1", 0);
const client = createClient(echoContract, `127.0.0.1:${port}`, { deadlineMs: 2_000, name: "echo", serviceToken: TOKEN });
const carried = new CarriedCalls({
  open: () => client.Carry() as never,
  servicePath: "/test.echo.v1.Echo",
  name: "echo",
  deadlineMs: 2_000,
  streamDeadlineMs: 5_000,
  registry: createRegistry("c"),
});
type Internals = {
  pending: Map<number, unknown>;
  stream: NodeJS.EventEmitter & { call?: { call?: { child?: { writeBuffer: unknown[] } } } };
};
const inside = carried as unknown as Internals;
const shared = new AbortController();
for (let b = 0; b < batches; b++) {
  const cpu = process.cpuUsage();
  let n = 0;
  const worker = async () => {
    while (n < per) {
      const i = n++;
      if (i % 3 === 0) {
        for await (const m of carried.serverStream<SayResponse>("Count", { text: "3" }, { signal: new AbortController().signal })) void m;
      } else await carried.unary<SayResponse>("Say", { text: "a" }, { signal: i % 3 === 1 ? shared.signal : new AbortController().signal });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const c = process.cpuUsage(cpu);
  console.log(
    `batch ${b + 1} (calls ${b * per + 1}-${(b + 1) * per}): ${((c.user + c.system) / 1000 / per).toFixed(3)} ms CPU per call; ` +
      `pending ${inside.pending.size}, shared signal's listeners ${getEventListeners(shared.signal, "abort").length}, ` +
      `stream's data/error/end/close listeners ${["data", "error", "end", "close"].map((e) => inside.stream.listenerCount(e)).join("/")}, ` +
      `timers ${process.getActiveResourcesInfo().filter((r) => r === "Timeout").length}, frames kept for a retry ${inside.stream.call?.call?.child?.writeBuffer.length ?? "?"}, ` +
      `heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`,
  );
}
carried.close();
client.close();
await server.shutdown(1_000);
