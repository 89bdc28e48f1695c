import type * as grpc from "@grpc/grpc-js";
import { status as GrpcStatus } from "@grpc/grpc-js";
import type { AppError } from "@gateway/errors";
import { currentActor, currentRequestId } from "@gateway/logger";
import { newId } from "@gateway/contract/ids";
import type { Registry } from "@gateway/metrics";
import type { CarriedFrame, CarriedReply } from "./carried-server.js";
import { clientHistogram } from "./client.js";
import { fromErrorFields, fromServiceError, isUnimplemented, statusName, transportFailure } from "./status.js";
import { carriedClientSpan, endRpcSpan } from "./tracing.js";
import type { CallOptions, ResponseStream } from "./types.js";

export type CarriedClientOptions = {
  /** Opens the long-lived stream (the contract's bidirectional method, with the service token). */
  open: () => grpc.ClientDuplexStream<CarriedFrame<unknown>, CarriedReply<unknown, unknown>>;
  /** `/<package>.<Service>`: carried calls are timed and traced under `<servicePath>/<method>`. */
  servicePath: string;
  /** Human name of the peer for error messages. */
  name: string;
  deadlineMs: number;
  streamDeadlineMs: number;
  registry?: Registry | undefined;
};

/** A stream's reader holds at most this many messages before it asks the service to pause that call. */
const PAUSE_AT = 64;

type Pending = {
  onReply(reply: CarriedReply<unknown, unknown>): void;
  fail(err: AppError): void;
};

/**
 * The caller's side of calls carried on one long-lived stream (docs/decisions/0246),
 * with the semantics of a call each: a deadline per call (at which the call is
 * cancelled and fails `unavailable`, as DEADLINE_EXCEEDED does), the caller's signal
 * cancelling it, the service's errors with their codes, and a stream's messages read
 * at the reader's pace (a reader that falls behind pauses its call, not the stream).
 * The stream opens with the first call and again after it breaks; the calls in
 * flight on a broken stream fail `unavailable`, as calls on a broken connection do.
 * A service that does not know the stream (UNIMPLEMENTED: an older build during a
 * rolling deploy) is called a call each from then on (`fallback`).
 */
export class CarriedCalls {
  private stream: grpc.ClientDuplexStream<CarriedFrame<unknown>, CarriedReply<unknown, unknown>> | undefined;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private closed = false;
  /** The service answered UNIMPLEMENTED: calls go unary. */
  unsupported = false;
  private readonly histogram;

  constructor(private readonly options: CarriedClientOptions) {
    this.histogram = options.registry ? clientHistogram(options.registry) : undefined;
  }

  /** Ends the stream (half-close): the service ends it once its calls are done. */
  close(): void {
    this.closed = true;
    this.stream?.end();
    this.stream = undefined;
  }

  private open(): grpc.ClientDuplexStream<CarriedFrame<unknown>, CarriedReply<unknown, unknown>> {
    if (this.stream) return this.stream;
    const stream = this.options.open();
    this.stream = stream;
    stream.on("data", (reply: CarriedReply<unknown, unknown>) => this.pending.get(reply.id)?.onReply(reply));
    const broken = (err: AppError) => {
      if (this.stream !== stream) return;
      this.stream = undefined;
      const calls = [...this.pending.values()];
      this.pending.clear();
      for (const call of calls) call.fail(err);
    };
    stream.on("error", (err: grpc.ServiceError) => {
      if (isUnimplemented(err)) this.unsupported = true;
      broken(err.code === GrpcStatus.UNAUTHENTICATED ? fromServiceError(err, this.options.name) : transportFailure(this.options.name));
    });
    // The service ended the stream (it stops): its calls were done; the next call opens another.
    stream.on("end", () => broken(transportFailure(this.options.name)));
    stream.on("close", () => broken(transportFailure(this.options.name)));
    return stream;
  }

  private id(): number {
    do this.next = this.next >= 0xffff_fffe ? 1 : this.next + 1;
    while (this.pending.has(this.next));
    return this.next;
  }

  private send(frame: CarriedFrame<unknown>): void {
    this.stream?.write(frame);
  }

  /**
   * Starts a call: registers it, arms its deadline and the caller's signal, and sends it.
   * `finish` runs exactly once, with the call's outcome.
   */
  private start(
    method: string,
    request: unknown,
    call: CallOptions | undefined,
    defaultDeadlineMs: number,
    handlers: { onReply(reply: CarriedReply<unknown, unknown>, finish: (err?: AppError) => void): void; finished(err?: AppError): void },
  ): { cancel(): void; id: number } {
    if (this.closed) {
      handlers.finished(transportFailure(this.options.name));
      return { cancel: () => undefined, id: 0 };
    }
    const stream = this.open();
    const id = this.id();
    const path = `${this.options.servicePath}/${method}`;
    const { span, traceparent } = carriedClientSpan(path);
    const started = process.hrtime.bigint();
    const deadlineMs = call?.deadlineMs ?? defaultDeadlineMs;
    const signal = call?.signal;
    let done = false;
    const finish = (err?: AppError, code?: GrpcStatus): void => {
      if (done) return;
      done = true;
      this.pending.delete(id);
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      const status = code ?? (err ? GrpcStatus.UNKNOWN : GrpcStatus.OK);
      endRpcSpan(span, status, "client");
      this.histogram?.observe({ method: path, code: statusName(status) }, Number(process.hrtime.bigint() - started) / 1e9);
      handlers.finished(err);
    };
    const cancel = (code: GrpcStatus) => {
      if (done) return;
      this.send({ id, kind: "cancel", cancel: true });
      finish(transportFailure(this.options.name), code);
    };
    const timer = setTimeout(() => cancel(GrpcStatus.DEADLINE_EXCEEDED), deadlineMs);
    const onAbort = () => cancel(GrpcStatus.CANCELLED);
    this.pending.set(id, {
      onReply: (reply) => handlers.onReply(reply, (err) => finish(err, err ? GrpcStatus.UNKNOWN : GrpcStatus.OK)),
      fail: (err) => finish(err, GrpcStatus.UNAVAILABLE),
    });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    stream.write({
      id,
      kind: "call",
      call: {
        method,
        request,
        request_id: call?.requestId ?? currentRequestId() ?? newId("req"),
        actor: call?.actor ?? currentActor() ?? "",
        traceparent,
        deadline_ms: deadlineMs,
      },
    });
    return { cancel: () => cancel(GrpcStatus.CANCELLED), id };
  }

  /** A unary call: its answer, or its failure as an AppError. */
  unary<Res>(method: string, request: unknown, call?: CallOptions): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      let result: Res | undefined;
      this.start(method, request, call, this.options.deadlineMs, {
        onReply(reply, finish) {
          if (reply.response !== undefined && reply.response !== null) {
            result = reply.response as Res;
            finish();
          } else if (reply.error) finish(fromErrorFields(reply.error));
        },
        finished: (err) => (err ? reject(err) : resolve(result as Res)),
      });
    });
  }

  /** A server-streaming call: its messages in order; iteration throws the call's failure; stopping early cancels it. */
  serverStream<Msg>(method: string, request: unknown, call?: CallOptions): ResponseStream<Msg> {
    const queue: Msg[] = [];
    let ended: { error?: AppError } | undefined;
    let wake: (() => void) | undefined;
    let paused = false;
    const notify = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const started = this.start(method, request, call, this.options.streamDeadlineMs, {
      onReply: (reply, finish) => {
        if (reply.message !== undefined && reply.message !== null) {
          queue.push(reply.message as Msg);
          if (!paused && queue.length >= PAUSE_AT) {
            paused = true;
            this.send({ id: started.id, kind: "pause", pause: true });
          }
          notify();
        } else if (reply.end) finish();
        else if (reply.error) finish(fromErrorFields(reply.error));
      },
      finished: (err) => {
        ended = err ? { error: err } : {};
        notify();
      },
    });
    const self = this;
    async function* iterate(): AsyncGenerator<Msg> {
      try {
        for (;;) {
          const message = queue.shift();
          if (message !== undefined) {
            if (paused && queue.length === 0 && !ended) {
              paused = false;
              self.send({ id: started.id, kind: "resume", resume: true });
            }
            yield message;
            continue;
          }
          if (ended) {
            if (ended.error) throw ended.error;
            return;
          }
          await new Promise<void>((resolve) => (wake = resolve));
        }
      } finally {
        // A caller that stops early (break, throw) ends the call too.
        started.cancel();
      }
    }
    return Object.assign(iterate(), { cancel: () => started.cancel() });
  }
}
