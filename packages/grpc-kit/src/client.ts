import { isIP } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { newId } from "@gateway/contract/ids";
import { currentActor, currentRequestId } from "@gateway/logger";
import { Histogram, LATENCY_BUCKETS, type Registry } from "@gateway/metrics";
import type { AnyContract } from "@gateway/protos";
import { assertServiceToken, SERVICE_TOKEN_METADATA } from "./auth.js";
import { METADATA, fromServiceError, statusName } from "./status.js";
import { channelCredentials, type GrpcTls } from "./tls.js";
import { endRpcSpan, startClientSpan } from "./tracing.js";
import type { CallOptions, PromiseClient, RequestStream, ResponseStream } from "./types.js";

export type ClientOptions = {
  /** Deadline of every unary call unless the call gives its own. */
  deadlineMs: number;
  /** Deadline of streaming calls; they may legitimately last long. */
  streamDeadlineMs?: number;
  /** Human name of the peer for error messages ("ledger"). */
  name?: string;
  registry?: Registry;
  /**
   * The shared service token every call carries (docs/decisions/0183). Only
   * the health check goes without one.
   */
  serviceToken?: string;
  /**
   * Mutual TLS (docs/decisions/0230): the client presents `cert` and accepts only a
   * server whose certificate `ca` signed for the host of `address`. Absent: plaintext.
   */
  tls?: GrpcTls | undefined;
};

/**
 * Keepalive: a ping every 2 minutes, calls or not, finds a connection that died silently
 * (a peer host gone, a middlebox that dropped it) within 2 minutes and 10 s, and keeps it
 * warm under idle timeouts of middleboxes (AWS's NLB: 350 s). Every 30 s as before woke
 * both processes of each connection four times a minute for that (docs/decisions/0200).
 */
const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  "grpc.keepalive_time_ms": 120_000,
  "grpc.keepalive_timeout_ms": 10_000,
  "grpc.keepalive_permit_without_calls": 1,
  "grpc.max_receive_message_length": 16 * 1024 * 1024,
  // No channelz: nothing here reads it, and it counts and timestamps every call
  // (a Date per call and per stream on both ends) for a debugging service we do not serve.
  "grpc.enable_channelz": 0,
  // A peer that is down must fail fast rather than wait out the whole deadline.
  "grpc.initial_reconnect_backoff_ms": 200,
  "grpc.max_reconnect_backoff_ms": 2_000,
};

const histograms = new WeakMap<Registry, Histogram<"method" | "code">>();
export function clientHistogram(registry: Registry): Histogram<"method" | "code"> {
  let h = histograms.get(registry);
  if (!h) {
    h = new Histogram({
      name: "grpc_client_handling_seconds",
      help: "Time from sending a gRPC call to its answer, by method and status.",
      labelNames: ["method", "code"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    histograms.set(registry, h);
  }
  return h;
}

/**
 * Starts a call without the stack trace grpc-js captures at the start of every
 * unary and server-streaming call (`new Error()` in `makeUnaryRequest`) only to
 * append it to the error of a call that fails ("for call at"): about 5 µs per
 * call, the largest single cost of a unary call on the client side. A failure
 * still becomes an AppError with the service's code (or the transport's), which
 * names the service; the caller's request id finds the call in the logs.
 */
function withoutCallerStack<T>(start: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return start();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * The channel's options for one address. Over TLS to a loopback IP (the dev stack's and
 * the tests' `127.0.0.1:port`), the name sent and checked is `localhost`: TLS may not
 * carry an IP address as the server name (RFC 6066; Node warns, DEP0123), and every
 * certificate of scripts/certs.sh names `localhost` beside `127.0.0.1`. Other addresses
 * are names (compose, Kubernetes) and are sent as they are.
 */
export function channelOptions(address: string, tls: boolean): grpc.ChannelOptions {
  const host = address.startsWith("[") ? address.slice(1, address.indexOf("]")) : address.split(":")[0];
  if (!tls || !host || !isLoopbackIp(host)) return CHANNEL_OPTIONS;
  return { ...CHANNEL_OPTIONS, "grpc.ssl_target_name_override": "localhost" };
}

function isLoopbackIp(host: string): boolean {
  return (isIP(host) === 4 && host.startsWith("127.")) || host === "::1";
}

export type Client<C> = PromiseClient<C> & {
  /** Closes the channel. */
  close(): void;
};

/**
 * A typed client for one contract. Every call carries the current request id
 * as metadata (and, when tracing is on, its client span as `traceparent`) and a
 * deadline; failures arrive as AppErrors with the contract code the service
 * chose, or `unavailable` when the service cannot be reached.
 */
export function createClient<C extends AnyContract>(contract: C, address: string, options: ClientOptions): Client<C> {
  const raw = new grpc.Client(address, channelCredentials(options.tls), channelOptions(address, options.tls !== undefined));
  const name = options.name ?? contract.serviceName;
  const histogram = options.registry ? clientHistogram(options.registry) : undefined;
  const methods: Record<string, unknown> = {};
  const token = options.serviceToken;
  if (token !== undefined) assertServiceToken(token, `client of ${name}`);

  const metadataFor = (call?: CallOptions) => {
    const md = new grpc.Metadata();
    if (token !== undefined) md.set(SERVICE_TOKEN_METADATA, token);
    md.set(METADATA.requestId, call?.requestId ?? currentRequestId() ?? newId("req"));
    const actor = call?.actor ?? currentActor();
    if (actor) md.set(METADATA.actor, actor);
    return md;
  };

  for (const [method, def] of Object.entries(contract.definition())) {
    if (def.requestStream && def.responseStream) {
      // A long-lived stream: no deadline; the service token is checked once, when it opens (docs/decisions/0246).
      methods[method] = (call?: CallOptions) => raw.makeBidiStreamRequest(def.path, def.requestSerialize, def.responseDeserialize, metadataFor(call), {});
    } else if (def.requestStream && !def.responseStream) {
      methods[method] = (call?: CallOptions): RequestStream<unknown, unknown> => {
        const deadlineMs = call?.deadlineMs ?? options.streamDeadlineMs ?? options.deadlineMs;
        let settle!: { resolve: (r: unknown) => void; reject: (e: unknown) => void };
        let ended: { error: unknown } | undefined;
        // At most one write waits for flow control at a time (callers await each write).
        let waiting: { resolve: () => void; reject: (e: unknown) => void } | undefined;
        const response = new Promise<unknown>((resolve, reject) => (settle = { resolve, reject }));
        // Nobody may be waiting on `response` when the call fails; the error also reaches write/end.
        response.catch(() => undefined);
        const metadata = metadataFor(call);
        const span = startClientSpan(def.path, metadata);
        const stream = raw.makeClientStreamRequest(
          def.path,
          def.requestSerialize,
          def.responseDeserialize,
          metadata,
          { deadline: Date.now() + deadlineMs },
          (err, res) => {
            endRpcSpan(span, err ? err.code : grpc.status.OK, "client");
            ended = { error: err ? fromServiceError(err, name) : new Error("the call has ended") };
            waiting?.reject(ended.error);
            waiting = undefined;
            if (err) settle.reject(ended.error);
            else settle.resolve(res);
          },
        );
        // The call's outcome arrives through the callback; stream errors must not go unheard.
        stream.on("error", () => undefined);
        stream.on("drain", () => {
          waiting?.resolve();
          waiting = undefined;
        });
        call?.signal?.addEventListener("abort", () => stream.cancel(), { once: true });
        return {
          response,
          write(message) {
            if (ended) return Promise.reject(ended.error);
            if (stream.write(message)) return Promise.resolve();
            return new Promise<void>((resolve, reject) => (waiting = { resolve, reject }));
          },
          end() {
            if (!ended) stream.end();
            return response;
          },
          cancel: () => stream.cancel(),
        };
      };
    } else if (def.responseStream) {
      methods[method] = (request: unknown, call?: CallOptions): ResponseStream<unknown> => {
        const deadlineMs = call?.deadlineMs ?? options.streamDeadlineMs ?? options.deadlineMs;
        const metadata = metadataFor(call);
        const span = startClientSpan(def.path, metadata);
        const stream = withoutCallerStack(() =>
          raw.makeServerStreamRequest(def.path, def.requestSerialize, def.responseDeserialize, request, metadata, {
            deadline: Date.now() + deadlineMs,
          }),
        );
        // The call's final status, whether the caller read it all, stopped early or never iterated.
        stream.once("status", (status: grpc.StatusObject) => endRpcSpan(span, status.code, "client"));
        const onAbort = () => stream.cancel();
        call?.signal?.addEventListener("abort", onAbort, { once: true });
        // Until the caller iterates, nobody listens to the stream; a cancel or a
        // broken connection must not become an uncaught 'error' event.
        stream.on("error", () => undefined);
        async function* iterate() {
          try {
            for await (const message of stream) yield message;
          } catch (err) {
            throw fromServiceError(err as grpc.ServiceError, name);
          } finally {
            call?.signal?.removeEventListener("abort", onAbort);
            // A caller that stops early (break, throw) ends the call too.
            stream.cancel();
          }
        }
        const iterable = iterate();
        return Object.assign(iterable, { cancel: () => stream.cancel() });
      };
    } else {
      methods[method] = (request: unknown, call?: CallOptions) =>
        new Promise((resolve, reject) => {
          const started = process.hrtime.bigint();
          const metadata = metadataFor(call);
          const span = startClientSpan(def.path, metadata);
          const pending = withoutCallerStack(() =>
            raw.makeUnaryRequest(
              def.path,
              def.requestSerialize,
              def.responseDeserialize,
              request,
              metadata,
              { deadline: Date.now() + (call?.deadlineMs ?? options.deadlineMs) },
              (err, response) => {
                call?.signal?.removeEventListener("abort", onAbort);
                endRpcSpan(span, err ? err.code : grpc.status.OK, "client");
                histogram?.observe({ method: def.path, code: statusName(err ? err.code : grpc.status.OK) }, Number(process.hrtime.bigint() - started) / 1e9);
                if (err) reject(fromServiceError(err, name));
                else resolve(response);
              },
            ),
          );
          call?.signal?.addEventListener("abort", onAbort, { once: true });
          function onAbort() {
            pending.cancel();
          }
        });
    }
  }
  return Object.assign(methods as PromiseClient<C>, { close: () => raw.close() });
}
