import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import * as grpc from "@grpc/grpc-js";
import { AppError } from "@gateway/errors";
import { createLogger, runWithContext } from "@gateway/logger";
import { createRegistry } from "@gateway/metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth, createClient, GrpcServer, type Client } from "./index.js";
import { echoContract } from "./testdata/echo.js";

const lines: Record<string, unknown>[] = [];
const destination = new Writable({
  write(chunk, _e, cb) {
    for (const l of String(chunk).split("\n")) if (l) lines.push(JSON.parse(l));
    cb();
  },
});

const TOKEN = randomBytes(32).toString("hex");
let server: GrpcServer;
let port: number;
let client: Client<typeof echoContract>;
const cancelled: string[] = [];
const collectEnded: string[] = [];
const sayContexts: { signal: AbortSignal }[] = [];
let collectRead = 0;

beforeAll(async () => {
  const registry = createRegistry("test");
  server = new GrpcServer({ logger: createLogger({ service: "echo", level: "debug", destination }), registry, serviceToken: TOKEN });
  server.add(echoContract, {
    Carry: (stream) => stream.end(),
    async Say(req, ctx) {
      sayContexts.push(ctx);
      if (req.sleep_ms > 0) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, req.sleep_ms);
          ctx.signal.addEventListener("abort", () => {
            clearTimeout(t);
            cancelled.push(req.text);
            resolve();
          });
        });
      }
      if (req.fail_with === "conflict") throw new AppError("conflict", "cost above max_cost", { extra: { pricing: { cost: 0.5 } } });
      if (req.fail_with === "rate") throw new AppError("rate_limited", "slow down", { retryAfter: 7 });
      if (req.fail_with === "crash") throw new Error('duplicate key value violates unique constraint "secret_table"');
      return { text: req.text.toUpperCase(), request_id: ctx.requestId + (ctx.actor ? `|${ctx.actor}` : "") };
    },
    async Collect(requests, ctx) {
      ctx.signal.addEventListener("abort", () => collectEnded.push("signal aborted"));
      const texts: string[] = [];
      try {
        for await (const r of requests) {
          if (r.fail_with === "too_large") throw new AppError("payload_too_large", "too much");
          if (r.sleep_ms > 0) await new Promise((resolve) => setTimeout(resolve, r.sleep_ms));
          collectRead++;
          if (r.text.length < 1000) texts.push(r.text);
        }
      } catch (err) {
        collectEnded.push(ctx.signal.aborted ? "cancelled" : "failed");
        throw err;
      }
      return { text: texts.join(","), request_id: ctx.requestId };
    },
    async Count(req, ctx, send) {
      for (let i = 1; i <= req.to; i++) {
        if (req.fail_after > 0 && i > req.fail_after) throw new AppError("upstream_error", "provider stream broke");
        await send({ text: String(i), request_id: ctx.requestId });
      }
    },
  });
  port = await server.listen("127.0.0.1", 0);
  client = createClient(echoContract, `127.0.0.1:${port}`, { deadlineMs: 2_000, name: "echo", registry, serviceToken: TOKEN });
});

afterAll(async () => {
  client.close();
  await server.shutdown(1_000);
});

describe("unary calls", () => {
  it("leave a finished call's signal alone when grpc-js reports its stream closed", async () => {
    const before = sayContexts.length;
    await client.Say({ text: "done" });
    await new Promise((r) => setTimeout(r, 100));
    const ctx = sayContexts[before]!;
    // grpc-js emits "cancelled" as every stream closes; aborting then would build a DOMException per call.
    expect(ctx.signal.aborted).toBe(false);
  });

  it("answer with typed responses and carry the caller's request id", async () => {
    const res = await runWithContext({ requestId: "req_fromEdge123" }, () => client.Say({ text: "hi" }));
    expect(res).toEqual({ text: "HI", request_id: "req_fromEdge123" });
    const line = lines.find((l) => l.rpc === "/test.echo.v1.Echo/Say" && l.request_id === "req_fromEdge123");
    expect(line).toMatchObject({ service: "echo", code: "OK" });
  });

  it("carry the authenticated actor of the caller's context", async () => {
    const res = await runWithContext({ requestId: "req_withActor1", actor: "user:usr_123" }, () => client.Say({ text: "a" }));
    expect(res.request_id).toBe("req_withActor1|user:usr_123");
  });

  it("generate a request id when the caller has none", async () => {
    const res = await client.Say({ text: "x" });
    expect(res.request_id).toMatch(/^req_[0-9A-Z]{26}$/);
  });

  it("keep an AppError's code, message and extras across the wire", async () => {
    const err = await client.Say({ text: "x", fail_with: "conflict" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "conflict", message: "cost above max_cost", extra: { pricing: { cost: 0.5 } } });
    const rate = await client.Say({ text: "x", fail_with: "rate" }).catch((e: unknown) => e);
    expect(rate).toMatchObject({ code: "rate_limited", retryAfter: 7 });
  });

  it("turn unknown failures into internal_error without their text", async () => {
    const err = (await client.Say({ text: "x", fail_with: "crash" }).catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe("internal_error");
    expect(err.message).not.toContain("secret_table");
    expect(lines.some((l) => l.msg === "rpc failed" && JSON.stringify(l).includes("secret_table"))).toBe(true);
  });

  it("give up at the deadline with unavailable and cancel the server's work", async () => {
    const started = Date.now();
    const err = (await client.Say({ text: "slow", sleep_ms: 5_000 }, { deadlineMs: 150 }).catch((e: unknown) => e)) as AppError;
    expect(err.code).toBe("unavailable");
    expect(Date.now() - started).toBeLessThan(1_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(cancelled).toContain("slow");
  });

  it("fail fast with unavailable when nothing listens", async () => {
    const dead = createClient(echoContract, "127.0.0.1:1", { deadlineMs: 5_000, name: "nowhere" });
    const started = Date.now();
    const err = (await dead.Say({ text: "x" }).catch((e: unknown) => e)) as AppError;
    dead.close();
    expect(err.code).toBe("unavailable");
    expect(err.message).toContain("nowhere");
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe("server streaming", () => {
  it("delivers every message in order", async () => {
    const got: string[] = [];
    for await (const m of client.Count({ to: 5 })) got.push(m.text);
    expect(got).toEqual(["1", "2", "3", "4", "5"]);
  });

  it("ends with the handler's AppError after the messages sent before it", async () => {
    const got: string[] = [];
    const err = await (async () => {
      for await (const m of client.Count({ to: 5, fail_after: 2 })) got.push(m.text);
    })().catch((e: unknown) => e);
    expect(got).toEqual(["1", "2"]);
    expect(err).toMatchObject({ code: "upstream_error", message: "provider stream broke" });
  });
});

describe("client streaming", () => {
  it("delivers every message in order, then the answer", async () => {
    const call = runWithContext({ requestId: "req_collect1" }, () => client.Collect());
    for (const text of ["a", "b", "c"]) await call.write({ text });
    expect(await call.end()).toEqual({ text: "a,b,c", request_id: "req_collect1" });
  });

  it("an early refusal rejects the next write and the answer with the handler's AppError", async () => {
    const call = client.Collect();
    await call.write({ text: "a" });
    await call.write({ text: "b", fail_with: "too_large" });
    let err: unknown;
    for (let i = 0; i < 100 && !err; i++) {
      err = await call.write({ text: String(i) }).then(
        () => new Promise((r) => setTimeout(r, 10)).then(() => undefined),
        (e: unknown) => e,
      );
    }
    expect(err).toMatchObject({ code: "payload_too_large", message: "too much" });
    await expect(call.end()).rejects.toMatchObject({ code: "payload_too_large" });
  });

  it("waits on flow control: the writer never runs far ahead of a slow reader", async () => {
    const call = client.Collect({ deadlineMs: 30_000 });
    const piece = "x".repeat(64 * 1024);
    collectRead = 0;
    let ahead = 0;
    // 200 messages of 64 KiB (12.5 MiB), each read after 5 ms. Without flow control every write would
    // resolve at once and the writer would be ~200 ahead; with it, only what the buffers hold.
    for (let written = 1; written <= 200; written++) {
      await call.write({ text: piece, sleep_ms: 5 });
      ahead = Math.max(ahead, written - collectRead);
    }
    await call.end();
    expect(collectRead).toBe(200);
    expect(ahead).toBeLessThan(60);
  });

  it("a cancelled call aborts the handler's signal, and the caller sees unavailable", async () => {
    const before = collectEnded.length;
    const call = client.Collect();
    await call.write({ text: "a" });
    await new Promise((r) => setTimeout(r, 50));
    call.cancel();
    await expect(call.response).rejects.toMatchObject({ code: "unavailable" });
    for (let i = 0; i < 50 && collectEnded.length === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(collectEnded.slice(before)).toContain("signal aborted");
  });
});

describe("health", () => {
  it("reports the server and each service SERVING, unknown services NOT_FOUND", async () => {
    expect(await checkHealth(`127.0.0.1:${port}`)).toBe("SERVING");
    expect(await checkHealth(`127.0.0.1:${port}`, "test.echo.v1.Echo")).toBe("SERVING");
    await expect(checkHealth(`127.0.0.1:${port}`, "nope")).rejects.toMatchObject({ code: "not_found" });
  });

  it("brings the statuses up to date before answering a Check (the runtime's database check)", async () => {
    let asked = 0;
    server.health.beforeCheck = async () => {
      asked++;
      server.health.set("", "NOT_SERVING");
    };
    try {
      expect(await checkHealth(`127.0.0.1:${port}`)).toBe("NOT_SERVING");
      expect(asked).toBe(1);
      server.health.beforeCheck = () => Promise.reject(new Error("database check failed"));
      server.health.set("", "SERVING");
      expect(await checkHealth(`127.0.0.1:${port}`)).toBe("SERVING"); // a failed refresh answers what is known
      expect(server.callsStarted).toBeGreaterThan(0); // health checks are not counted; the calls above were
    } finally {
      server.health.beforeCheck = undefined;
      server.health.set("", "SERVING");
    }
  });
});

describe("service-call authentication", () => {
  const calls = () => sayContexts.length + collectRead;
  const withToken = (serviceToken?: string) =>
    createClient(echoContract, `127.0.0.1:${port}`, { deadlineMs: 2_000, name: "echo", ...(serviceToken !== undefined ? { serviceToken } : {}) });

  /** The raw status of a unary call made with exactly this metadata (no client kit in between). */
  const rawSay = (metadata: grpc.Metadata) =>
    new Promise<grpc.ServiceError | null>((resolve) => {
      const raw = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
      const def = echoContract.definition().Say;
      raw.makeUnaryRequest(def.path, def.requestSerialize, def.responseDeserialize, { text: "raw" }, metadata, { deadline: Date.now() + 2_000 }, (err) => {
        raw.close();
        resolve(err);
      });
    });

  it("refuses a unary call without a token UNAUTHENTICATED, and the handler never runs", async () => {
    const before = calls();
    const err = await rawSay(new grpc.Metadata());
    expect(err?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(calls()).toBe(before);
  });

  it("refuses a wrong token, one of another length, and the token sent twice", async () => {
    const before = calls();
    const wrong = new grpc.Metadata();
    wrong.set("x-service-token", randomBytes(32).toString("hex"));
    expect((await rawSay(wrong))?.code).toBe(grpc.status.UNAUTHENTICATED);
    const prefix = new grpc.Metadata();
    prefix.set("x-service-token", TOKEN.slice(0, 40));
    expect((await rawSay(prefix))?.code).toBe(grpc.status.UNAUTHENTICATED);
    const twice = new grpc.Metadata();
    twice.add("x-service-token", TOKEN);
    twice.add("x-service-token", TOKEN);
    expect((await rawSay(twice))?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(calls()).toBe(before);
    const right = new grpc.Metadata();
    right.set("x-service-token", TOKEN);
    expect(await rawSay(right)).toBeNull();
  });

  it("gives the kit's caller `unavailable` (a misconfigured caller answers 503, not a 401 about its own client), never reaching the handler", async () => {
    const before = calls();
    for (const other of [withToken(), withToken(randomBytes(32).toString("hex"))]) {
      const err = (await other.Say({ text: "x" }).catch((e: unknown) => e)) as AppError;
      expect(err).toBeInstanceOf(AppError);
      expect(err.code).toBe("unavailable");
      expect((err.cause as grpc.ServiceError).code).toBe(grpc.status.UNAUTHENTICATED);
      const stream = (async () => {
        for await (const _ of other.Count({ to: 3 })) expect.unreachable();
      })();
      await expect(stream).rejects.toMatchObject({ code: "unavailable" });
      const upload = other.Collect();
      await upload.write({ text: "a" }).catch(() => undefined);
      await expect(upload.end()).rejects.toMatchObject({ code: "unavailable" });
      other.close();
    }
    expect(calls()).toBe(before);
    const refused = lines.filter((l) => l.msg === "rpc refused: missing or wrong service token");
    expect(refused.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
  });

  it("leaves the health service open (orchestrator probes send no metadata)", async () => {
    expect(await checkHealth(`127.0.0.1:${port}`, "test.echo.v1.Echo")).toBe("SERVING");
  });

  it("will not run a server or client on a token shorter than 32 characters", () => {
    expect(() => new GrpcServer({ logger: createLogger({ service: "x", level: "silent" }), registry: createRegistry("short"), serviceToken: "short" })).toThrow(
      /at least 32/,
    );
    expect(() => withToken("short")).toThrow(/at least 32/);
  });
});
