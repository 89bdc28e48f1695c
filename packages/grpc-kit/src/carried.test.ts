import { randomBytes } from "node:crypto";
import { getEventListeners } from "node:events";
import { AppError } from "@gateway/errors";
import { createLogger, runWithContext } from "@gateway/logger";
import { createRegistry } from "@gateway/metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CarriedCalls, createClient, GrpcServer, serveCarried, type CallContext, type Client } from "./index.js";
import { echoContract, type SayRequestOut, type SayResponse } from "./testdata/echo.js";

// Calls carried on one long-lived stream (docs/decisions/0246), against a real server over loopback.
const TOKEN = randomBytes(32).toString("hex");
let server: GrpcServer;
let port: number;
let client: Client<typeof echoContract>;
let carried: CarriedCalls;
const aborted: string[] = [];
let streamsOpened = 0;
let sent = 0;

async function say(req: SayRequestOut, ctx: CallContext): Promise<SayResponse> {
  if (req.sleep_ms > 0) {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, req.sleep_ms);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(t);
        aborted.push(req.text);
        resolve();
      });
    });
  }
  if (req.fail_with === "conflict") throw new AppError("conflict", "cost above max_cost", { extra: { pricing: { cost: 0.5 } } });
  if (req.fail_with === "rate") throw new AppError("rate_limited", "slow down", { retryAfter: 7 });
  if (req.fail_with === "crash") throw new Error("a secret detail");
  return { text: req.text.toUpperCase(), request_id: ctx.requestId + (ctx.actor ? `|${ctx.actor}` : "") };
}

/** Sends `text`'s number of messages; a failure after `sleep_ms` of them when asked. */
async function count(req: SayRequestOut, ctx: CallContext, send: (m: SayResponse) => Promise<void>): Promise<void> {
  for (let i = 1; i <= Number(req.text); i++) {
    if (req.fail_with === "broke" && i > req.sleep_ms) throw new AppError("upstream_error", "provider stream broke");
    await send({ text: String(i), request_id: ctx.requestId });
    sent = i;
  }
}

/** A server of the echo contract whose Carry stream serves Say and Count as carried calls. */
function echoServer(): GrpcServer {
  const s = new GrpcServer({ logger: createLogger({ service: "echo", level: "silent" }), registry: createRegistry("test"), serviceToken: TOKEN });
  s.add(echoContract, {
    Say: say,
    async Count() {},
    async Collect() {
      return {};
    },
    Carry: (stream) => serveCarried(s, "/test.echo.v1.Echo", { unary: { Say: say }, streaming: { Count: count } }, stream),
  });
  return s;
}

/** Calls carried on streams of `over` (the file's client unless given), each stream counted in `streamsOpened`. */
function open(over: Client<typeof echoContract> = client, deadlineMs = 2_000): CarriedCalls {
  return new CarriedCalls({
    open: () => {
      streamsOpened++;
      return over.Carry() as never;
    },
    servicePath: "/test.echo.v1.Echo",
    name: "echo",
    deadlineMs,
    streamDeadlineMs: 5_000,
  });
}

beforeAll(async () => {
  server = echoServer();
  port = await server.listen("127.0.0.1", 0);
  client = createClient(echoContract, `127.0.0.1:${port}`, { deadlineMs: 2_000, name: "echo", serviceToken: TOKEN });
  carried = open();
});

afterAll(async () => {
  carried.close();
  client.close();
  await server.shutdown(1_000);
});

describe("calls carried on one stream", () => {
  it("answer each call by its id, with the caller's request id and actor, on one stream", async () => {
    const before = streamsOpened;
    const answers = await runWithContext({ requestId: "req_carried1", actor: "key:k1" }, () =>
      Promise.all(["a", "b", "c"].map((text) => carried.unary<SayResponse>("Say", { text }))),
    );
    expect(answers.map((a) => a.text)).toEqual(["A", "B", "C"]);
    expect(answers[0]!.request_id).toBe("req_carried1|key:k1");
    expect(streamsOpened - before).toBeLessThanOrEqual(1);
  });

  it("fail with the service's error code, message, extras and retry-after; hide an unexpected error", async () => {
    await expect(carried.unary("Say", { text: "x", fail_with: "conflict" })).rejects.toMatchObject({
      code: "conflict",
      message: "cost above max_cost",
      extra: { pricing: { cost: 0.5 } },
    });
    await expect(carried.unary("Say", { text: "x", fail_with: "rate" })).rejects.toMatchObject({ code: "rate_limited", retryAfter: 7 });
    await expect(carried.unary("Say", { text: "x", fail_with: "crash" })).rejects.toMatchObject({ code: "internal_error", message: "internal error" });
  });

  it("cancel a call at its deadline (unavailable), and the service's signal aborts", async () => {
    await expect(carried.unary("Say", { text: "slow1", sleep_ms: 3_000 }, { deadlineMs: 100 })).rejects.toMatchObject({ code: "unavailable" });
    await expect.poll(() => aborted).toContain("slow1");
  });

  it("cancel a call when the caller's signal aborts", async () => {
    const cancel = new AbortController();
    const call = carried.unary("Say", { text: "slow2", sleep_ms: 3_000 }, { signal: cancel.signal });
    setTimeout(() => cancel.abort(), 50);
    await expect(call).rejects.toMatchObject({ code: "unavailable" });
    await expect.poll(() => aborted).toContain("slow2");
    // The stream goes on serving.
    await expect(carried.unary<SayResponse>("Say", { text: "after" })).resolves.toMatchObject({ text: "AFTER" });
  });

  it("stream messages in order, and end with the service's failure after them", async () => {
    const got: string[] = [];
    for await (const m of carried.serverStream<SayResponse>("Count", { text: "5" })) got.push(m.text!);
    expect(got).toEqual(["1", "2", "3", "4", "5"]);
    const partial: string[] = [];
    await expect(
      (async () => {
        for await (const m of carried.serverStream<SayResponse>("Count", { text: "5", fail_with: "broke", sleep_ms: 2 })) partial.push(m.text!);
      })(),
    ).rejects.toMatchObject({ code: "upstream_error", message: "provider stream broke" });
    expect(partial).toEqual(["1", "2"]);
  });

  it("pause a call whose reader falls behind, without holding the other calls", async () => {
    const stream = carried.serverStream<SayResponse>("Count", { text: "1000" });
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    await new Promise((r) => setTimeout(r, 300));
    // The service waits for the reader: far fewer than 1,000 sent.
    expect(sent).toBeLessThan(200);
    await expect(carried.unary<SayResponse>("Say", { text: "meanwhile" })).resolves.toMatchObject({ text: "MEANWHILE" });
    let n = 1;
    for (let next = await it.next(); !next.done; next = await it.next()) n++;
    expect(n).toBe(1000);
  });

  it("leave nothing behind per call on a long-lived stream: no pending call, listener, timer or retained frame grows with the calls (issue 37)", async () => {
    const calls = open();
    type Internals = {
      pending: Map<number, unknown>;
      stream: NodeJS.EventEmitter & { call?: { call?: { child?: { writeBuffer: unknown[] } } } };
    };
    const inside = calls as unknown as Internals;
    // One signal for the whole run, as a server-wide signal would be: each call must take its listener off it.
    const shared = new AbortController();
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
    const events = ["data", "error", "end", "close"] as const;
    const round = async (n: number) => {
      for (let i = 0; i < n; i += 8) {
        await Promise.all([
          calls.unary<SayResponse>("Say", { text: "a" }, { signal: shared.signal }),
          calls.unary<SayResponse>("Say", { text: "b" }, { signal: new AbortController().signal }),
          calls.unary("Say", { text: "x", fail_with: "conflict" }, { signal: shared.signal }).catch(() => undefined),
          calls.unary("Say", { text: "slow", sleep_ms: 50 }, { deadlineMs: 1, signal: shared.signal }).catch(() => undefined),
          (async () => {
            for await (const m of calls.serverStream<SayResponse>("Count", { text: "3" }, { signal: shared.signal })) void m;
          })(),
          (async () => {
            // A reader that stops after the first message cancels the rest.
            for await (const m of calls.serverStream<SayResponse>("Count", { text: "50" })) if (m) break;
          })(),
          (async () => {
            const cancel = new AbortController();
            const call = calls.unary("Say", { text: "gone", sleep_ms: 50 }, { signal: cancel.signal });
            cancel.abort();
            await call.catch(() => undefined);
          })(),
          calls.unary<SayResponse>("Say", { text: "c" }),
        ]);
      }
    };
    await round(80);
    const listeners = events.map((e) => inside.stream.listenerCount(e));
    const baseTimers = timers();
    await round(2_000);
    expect(inside.pending.size).toBe(0);
    expect(getEventListeners(shared.signal, "abort")).toHaveLength(0);
    expect(events.map((e) => inside.stream.listenerCount(e))).toEqual(listeners);
    expect(timers()).toBeLessThanOrEqual(baseTimers);
    // grpc-js keeps a stream's sent frames for a retry until they are written: once the last
    // calls' frames (a cancel, say) are out, at most the last one, not one per call.
    const retained = () => inside.stream.call?.call?.child?.writeBuffer;
    expect(Array.isArray(retained())).toBe(true);
    await expect.poll(() => retained()!.length, { timeout: 2_000 }).toBeLessThanOrEqual(1);
    calls.close();
  });

  it("fail the calls in flight on a stream the service ends, and open another for the next call", async () => {
    const calls = open();
    const before = streamsOpened;
    const inFlight = calls.unary("Say", { text: "cut", sleep_ms: 1_000 });
    await new Promise((r) => setTimeout(r, 100));
    // A second server stopping would end its streams; here the client's own stream breaks the same way.
    (calls as unknown as { stream?: { cancel(): void } }).stream?.cancel();
    await expect(inFlight).rejects.toMatchObject({ code: "unavailable" });
    await expect(calls.unary<SayResponse>("Say", { text: "again" })).resolves.toMatchObject({ text: "AGAIN" });
    expect(streamsOpened - before).toBe(2);
    calls.close();
  });

  it("finish the calls in flight when the service stops, refuse new ones, and end the stream so the stop does not wait on it", async () => {
    const other = echoServer();
    const otherPort = await other.listen("127.0.0.1", 0);
    const otherClient = createClient(echoContract, `127.0.0.1:${otherPort}`, { deadlineMs: 2_000, name: "echo", serviceToken: TOKEN });
    const calls = open(otherClient, 5_000);
    const inFlight = calls.unary<SayResponse>("Say", { text: "finishing", sleep_ms: 500 });
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const stopped = other.shutdown(4_000);
    await expect(inFlight).resolves.toMatchObject({ text: "FINISHING" });
    await stopped;
    // Graceful: done once the call was, not at the 4 s timeout.
    expect(Date.now() - started).toBeLessThan(3_000);
    await expect(calls.unary("Say", { text: "late" })).rejects.toMatchObject({ code: "unavailable" });
    calls.close();
    otherClient.close();
  });

  it("refuse a stream without the service token", async () => {
    const stranger = createClient(echoContract, `127.0.0.1:${port}`, { deadlineMs: 2_000, name: "echo" });
    const calls = open(stranger);
    await expect(calls.unary("Say", { text: "x" })).rejects.toMatchObject({ code: "unavailable" });
    calls.close();
    stranger.close();
  });
});
