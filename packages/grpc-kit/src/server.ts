import * as grpc from "@grpc/grpc-js";
import { newId, isId } from "@gateway/contract/ids";
import { isAppError, HTTP_STATUS } from "@gateway/errors";
import { runWithContext, type Logger } from "@gateway/logger";
import { Histogram, LATENCY_BUCKETS, type Registry } from "@gateway/metrics";
import { healthV1, type AnyContract } from "@gateway/protos";
import { withSpan, type Span } from "@gateway/telemetry";
import { ServiceTokenCheck, unauthenticatedStatus } from "./auth.js";
import { HealthService } from "./health.js";
import { METADATA, statusName, toStatus } from "./status.js";
import { serverCredentials, type GrpcTls } from "./tls.js";
import { carriedServerSpan, endRpcSpan, startServerSpan } from "./tracing.js";
import type { BidiMethod, CallContext, ClientStreamMethod, Implementation, ServerStreamMethod, UnaryMethod } from "./types.js";

export type GrpcServerOptions = {
  logger: Logger;
  registry: Registry;
  /**
   * The shared service token (at least 32 characters): a call to any added
   * service without it, or with another, is refused UNAUTHENTICATED before its
   * handler runs. The health service stays open (docs/decisions/0183).
   */
  serviceToken: string;
  /**
   * Mutual TLS (docs/decisions/0230): the server presents `cert` and accepts only
   * clients with a certificate `ca` signed. Absent: plaintext (local runs only;
   * the configuration refuses it in production).
   */
  tls?: GrpcTls | undefined;
};

/**
 * Keepalive: the clients ping every connection (every 2 minutes, client.ts), so the server's
 * own pings only find a client that vanished without closing its connection; every 5 minutes
 * is enough for that (each ping wakes both processes, docs/decisions/0200).
 */
const SERVER_OPTIONS: grpc.ServerOptions = {
  "grpc.keepalive_time_ms": 300_000,
  "grpc.keepalive_timeout_ms": 10_000,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc.http2.min_ping_interval_without_data_ms": 10_000,
  "grpc.max_receive_message_length": 16 * 1024 * 1024,
  // No channelz: nothing here reads it, and it counts and timestamps every call
  // (a Date per call and per stream on both ends) for a debugging service we do not serve.
  "grpc.enable_channelz": 0,
};

function bind(server: grpc.Server, address: string, credentials: grpc.ServerCredentials): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.bindAsync(address, credentials, (err, actual) => (err ? reject(err) : resolve(actual)));
  });
}

/** Calls whose handler has settled: their stream's later "cancelled" aborts nothing. */
const finished = new WeakSet<object>();

/**
 * A call's context. The signal is made when a handler first asks for it: most
 * handlers never do, and an AbortController aborted at a call's end builds a
 * DOMException (a stack capture) per call. A class, not an object literal: a
 * literal with a getter is built by V8's slow path on every call (a few µs, the
 * largest cost of making the context).
 */
export class ServerCallContext implements CallContext {
  private controller: AbortController | undefined;
  /** Read by a carried call's loop (carried-server.ts); set only by `cancel`. */
  cancelled = false;

  constructor(
    readonly requestId: string,
    readonly actor: string | undefined,
    readonly metadata: grpc.Metadata,
    readonly deadline: Date | undefined,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort();
    }
    return this.controller.signal;
  }

  cancel(): void {
    this.cancelled = true;
    this.controller?.abort();
  }
}

/**
 * A gRPC server whose handlers are async functions. Each call runs inside the
 * caller's request context (request id from metadata) and, when tracing is on,
 * a server span that continues the caller's trace (`traceparent` metadata); it
 * is timed, logged and answered exactly once; thrown AppErrors keep their
 * contract code.
 */
export class GrpcServer {
  readonly health = new HealthService();
  private readonly server = new grpc.Server(SERVER_OPTIONS);
  private readonly log: Logger;
  private readonly duration: Histogram<"method" | "code">;
  private readonly services: string[] = [];
  private readonly token: ServiceTokenCheck;
  private readonly tls: GrpcTls | undefined;
  /** The plaintext listener of the health service alone (`listenHealth`), for probes without TLS. */
  private healthServer: grpc.Server | undefined;
  private started = 0;

  /** Calls that reached a handler so far (health checks and refused calls not counted): periodic work asks whether the process served anything since its last pass. */
  get callsStarted(): number {
    return this.started;
  }

  constructor(options: GrpcServerOptions) {
    this.token = new ServiceTokenCheck(options.serviceToken);
    this.tls = options.tls;
    this.log = options.logger.child({ component: "grpc" });
    this.duration = new Histogram({
      name: "grpc_server_handling_seconds",
      help: "Time to answer a gRPC call, by method and status.",
      labelNames: ["method", "code"],
      buckets: LATENCY_BUCKETS,
      registers: [options.registry],
    });
    this.server.addService(healthV1.definition(), this.health.handlers());
  }

  add<C extends AnyContract>(contract: C, implementation: Implementation<C>): this {
    const definition = contract.definition();
    const impl = implementation as unknown as Record<
      string,
      UnaryMethod<unknown, unknown> | ServerStreamMethod<unknown, unknown> | ClientStreamMethod<unknown, unknown>
    >;
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const [name, method] of Object.entries(definition)) {
      const fn = impl[name];
      if (!fn) throw new Error(`${contract.serviceName}.${name} is not implemented`);
      handlers[name] =
        method.requestStream && method.responseStream
          ? this.wrapBidi(method.path, fn as unknown as BidiMethod<unknown, unknown>)
          : method.requestStream
            ? this.wrapClientStream(method.path, fn as ClientStreamMethod<unknown, unknown>)
            : method.responseStream
              ? this.wrapServerStream(method.path, fn as ServerStreamMethod<unknown, unknown>)
              : this.wrapUnary(method.path, fn as UnaryMethod<unknown, unknown>);
    }
    this.server.addService(definition, handlers);
    this.services.push(contract.serviceName);
    return this;
  }

  /** Whether calls arrive over mutual TLS. */
  get secure(): boolean {
    return this.tls !== undefined;
  }

  /** Binds (over TLS when the server has it), then reports every added service (and the server as a whole) SERVING. */
  async listen(host: string, port: number): Promise<number> {
    const bound = await bind(this.server, `${host}:${port}`, serverCredentials(this.tls));
    for (const name of ["", ...this.services]) this.health.set(name, "SERVING");
    return bound;
  }

  /**
   * A second listener, always plaintext, that serves the standard health service and
   * nothing else (the same statuses): for probes that cannot speak TLS, such as the
   * kubelet's `grpc` probes (docs/decisions/0230). Every other service stays on the
   * TLS port.
   */
  async listenHealth(host: string, port: number): Promise<number> {
    if (this.healthServer) throw new Error("the health listener is already bound");
    const server = new grpc.Server(SERVER_OPTIONS);
    server.addService(healthV1.definition(), this.health.handlers());
    this.healthServer = server;
    return bind(server, `${host}:${port}`, grpc.ServerCredentials.createInsecure());
  }

  /**
   * Graceful stop: report NOT_SERVING, refuse new calls, let in-flight calls
   * finish; after `timeoutMs` the remaining ones are cancelled.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    for (const name of ["", ...this.services]) this.health.set(name, "NOT_SERVING");
    for (const drain of this.draining.splice(0)) drain();
    this.health.close();
    this.healthServer?.forceShutdown();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, timeoutMs);
      timer.unref();
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private context(
    call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown> | grpc.ServerReadableStream<unknown, unknown>,
  ): CallContext {
    this.started++;
    const fromCaller = call.metadata.get(METADATA.requestId)[0];
    const requestId = typeof fromCaller === "string" && isId(fromCaller) ? fromCaller : newId("req");
    const rawActor = call.metadata.get(METADATA.actor)[0];
    const actor = typeof rawActor === "string" && /^[a-z]+:[A-Za-z0-9_.:-]{1,160}$/.test(rawActor) ? rawActor : undefined;
    const deadline = call.getDeadline();
    const ctx = new ServerCallContext(
      requestId,
      actor,
      call.metadata,
      deadline instanceof Date ? deadline : Number.isFinite(deadline) ? new Date(deadline) : undefined,
    );
    // grpc-js reports "cancelled" when any call's stream closes, finished or not: a unary or
    // server-streaming call whose handler has settled is not aborted. (A client stream can
    // end before its cancellation is reported, so those are always aborted.)
    (call as grpc.ServerUnaryCall<unknown, unknown>).on("cancelled", () => {
      if (!finished.has(call)) ctx.cancel();
    });
    return ctx;
  }

  private observe(path: string, started: bigint, err: unknown, span: Span): void {
    const code = err === undefined ? grpc.status.OK : (toStatus(err).code ?? grpc.status.UNKNOWN);
    endRpcSpan(span, code, "server");
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.duration.observe({ method: path, code: statusName(code) }, seconds);
    // A successful call's line is at debug: its fields are built only when that level is on.
    if (err === undefined) {
      if (this.log.isLevelEnabled("debug")) this.log.debug({ rpc: path, code: statusName(code), duration_ms: Math.round(seconds * 1e4) / 10 }, "rpc");
      return;
    }
    const fields = { rpc: path, code: statusName(code), duration_ms: Math.round(seconds * 1e4) / 10 };
    if (isAppError(err) && HTTP_STATUS[err.code] < 500) this.log.info({ ...fields, error: err.code, detail: err.message }, "rpc");
    else if (isAppError(err)) this.log.warn({ ...fields, error: err.code, detail: err.message }, "rpc");
    else this.log.error({ ...fields, err }, "rpc failed");
  }

  /** Refuses a call without the right service token; true when refused (the handler must not run). */
  private refused(path: string, call: { metadata: grpc.Metadata; getPeer(): string }): boolean {
    if (this.token.accepts(call.metadata)) return false;
    this.duration.observe({ method: path, code: statusName(grpc.status.UNAUTHENTICATED) }, 0);
    // Never the presented value: it may be a real token of another environment.
    this.log.warn({ rpc: path, code: "UNAUTHENTICATED", peer: call.getPeer() }, "rpc refused: missing or wrong service token");
    return true;
  }

  /** Shutdown steps of long-lived streams (they would hold a graceful stop until its timeout): run when shutdown starts. */
  private readonly draining: (() => void)[] = [];

  /** Registers what a long-lived stream does when the server stops: refuse new work, end the stream once its calls are done. */
  onShutdown(drain: () => void): () => void {
    this.draining.push(drain);
    return () => {
      const at = this.draining.indexOf(drain);
      if (at >= 0) this.draining.splice(at, 1);
    };
  }

  /**
   * One call carried inside a long-lived stream (docs/decisions/0246), answered as a call of
   * `path` would be: counted, run in the caller's request context and server span, timed and
   * logged exactly as `wrapUnary` does. `settled` receives the error (undefined on success).
   */
  runCarried<T>(
    path: string,
    carried: { requestId: string; actor: string | undefined; traceparent: string },
    run: () => Promise<T>,
    settled: (err: unknown, result?: T) => void,
  ): void {
    this.started++;
    const started = process.hrtime.bigint();
    const span = carriedServerSpan(path, carried.traceparent, carried.requestId);
    runWithContext({ requestId: carried.requestId, ...(carried.actor ? { actor: carried.actor } : {}) }, () =>
      withSpan(span, () => {
        run().then(
          (result) => {
            this.observe(path, started, undefined, span);
            settled(undefined, result);
          },
          (err: unknown) => {
            this.observe(path, started, err, span);
            settled(err);
          },
        );
      }),
    );
  }

  private wrapBidi(path: string, fn: BidiMethod<unknown, unknown>): grpc.handleBidiStreamingCall<unknown, unknown> {
    return (call) => {
      // The stream's errors (a caller gone) are heard by the handler's own listeners; none may go uncaught.
      call.on("error", () => undefined);
      if (this.refused(path, call)) {
        call.emit("error", unauthenticatedStatus());
        return;
      }
      fn(call);
    };
  }

  private wrapUnary(path: string, fn: UnaryMethod<unknown, unknown>): grpc.handleUnaryCall<unknown, unknown> {
    return (call, callback) => {
      if (this.refused(path, call)) return callback(unauthenticatedStatus());
      const ctx = this.context(call);
      const started = process.hrtime.bigint();
      const span = startServerSpan(path, call.metadata, ctx.requestId);
      runWithContext({ requestId: ctx.requestId, ...(ctx.actor ? { actor: ctx.actor } : {}) }, () =>
        withSpan(span, () => {
          fn(call.request, ctx).then(
            (response) => {
              finished.add(call);
              this.observe(path, started, undefined, span);
              callback(null, response);
            },
            (err: unknown) => {
              finished.add(call);
              this.observe(path, started, err, span);
              callback(toStatus(err));
            },
          );
        }),
      );
    };
  }

  private wrapServerStream(path: string, fn: ServerStreamMethod<unknown, unknown>): grpc.handleServerStreamingCall<unknown, unknown> {
    return (call) => {
      if (this.refused(path, call)) {
        call.emit("error", unauthenticatedStatus());
        return;
      }
      const ctx = this.context(call);
      const started = process.hrtime.bigint();
      const span = startServerSpan(path, call.metadata, ctx.requestId);
      const send = (message: unknown) =>
        new Promise<void>((resolve, reject) => {
          if (call.cancelled) return reject(new Error("call cancelled"));
          if (call.write(message)) return resolve();
          const onDrain = () => {
            call.off("cancelled", onCancel);
            resolve();
          };
          const onCancel = () => {
            call.off("drain", onDrain);
            reject(new Error("call cancelled"));
          };
          call.once("drain", onDrain);
          call.once("cancelled", onCancel);
        });
      runWithContext({ requestId: ctx.requestId, ...(ctx.actor ? { actor: ctx.actor } : {}) }, () =>
        withSpan(span, () => {
          fn(call.request, ctx, send).then(
            () => {
              finished.add(call);
              this.observe(path, started, undefined, span);
              call.end();
            },
            (err: unknown) => {
              finished.add(call);
              this.observe(path, started, err, span);
              if (!call.cancelled) call.emit("error", toStatus(err));
            },
          );
        }),
      );
    };
  }

  private wrapClientStream(path: string, fn: ClientStreamMethod<unknown, unknown>): grpc.handleClientStreamingCall<unknown, unknown> {
    return (call, callback) => {
      if (this.refused(path, call)) {
        call.on("error", () => undefined);
        return callback(unauthenticatedStatus());
      }
      const ctx = this.context(call);
      const started = process.hrtime.bigint();
      const span = startServerSpan(path, call.metadata, ctx.requestId);
      // A cancelled call destroys the stream; iteration then throws. Errors are heard here and by the iterator.
      call.on("error", () => undefined);
      // A cancelled call's stream may simply end (grpc-js reports the cancellation just after its 'end'):
      // protocols carry an explicit last message (files' UploadFile sends `end`), and ctx.signal aborts.
      const requests: AsyncIterable<unknown> = { [Symbol.asyncIterator]: () => call[Symbol.asyncIterator]() };
      runWithContext({ requestId: ctx.requestId, ...(ctx.actor ? { actor: ctx.actor } : {}) }, () =>
        withSpan(span, () => {
          fn(requests, ctx).then(
            (response) => {
              this.observe(path, started, undefined, span);
              callback(null, response);
            },
            (err: unknown) => {
              this.observe(path, started, err, span);
              callback(toStatus(err));
            },
          );
        }),
      );
    };
  }
}
