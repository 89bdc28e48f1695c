import * as grpc from "@grpc/grpc-js";
import { AppError } from "@gateway/errors";
import { isId, newId } from "@gateway/contract/ids";
import { ServerCallContext, type GrpcServer } from "./server.js";
import { toErrorFields, type ErrorFields } from "./status.js";
import type { ServerStreamMethod, UnaryMethod } from "./types.js";

/**
 * Calls carried as messages on one long-lived bidirectional stream instead of a
 * gRPC call each (docs/decisions/0246): the caller's side is `carried-client.ts`.
 * The frames are a contract's own messages with these fields (managed-ai's
 * InvocationFrame and InvocationReply).
 */
export type CarriedFrame<Req> = {
  id: number;
  kind?: "call" | "cancel" | "pause" | "resume";
  call?: { method: string; request?: Req | null; request_id: string; actor: string; traceparent: string; deadline_ms: number } | null;
  cancel?: boolean;
  pause?: boolean;
  resume?: boolean;
};
export type CarriedReply<Res, Msg> = {
  id: number;
  response?: Res;
  message?: Msg;
  end?: boolean;
  error?: ErrorFields;
};

export type CarriedMethods<Req, Res, Msg> = {
  unary: Readonly<Record<string, UnaryMethod<Req, Res>>>;
  streaming: Readonly<Record<string, ServerStreamMethod<Req, Msg>>>;
};

const NO_METADATA = new grpc.Metadata();
const ACTOR = /^[a-z]+:[A-Za-z0-9_.:-]{1,160}$/;

/** A carried call's context: what a call's context is, its cancellation from a `cancel` frame or a lost stream. */
class CarriedContext extends ServerCallContext {
  paused = false;
  private onResume: (() => void) | undefined;

  constructor(
    requestId: string,
    actor: string | undefined,
    readonly traceparent: string,
    deadline: Date | undefined,
  ) {
    super(requestId, actor, NO_METADATA, deadline);
  }

  override cancel(): void {
    if (this.cancelled) return;
    super.cancel();
    this.resume();
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    const wake = this.onResume;
    this.onResume = undefined;
    wake?.();
  }

  resumed(): Promise<void> {
    return new Promise((resolve) => (this.onResume = resolve));
  }
}

/**
 * Serves one stream of carried calls. Each call runs as a call of
 * `<servicePath>/<method>` would (`GrpcServer.runCarried`: request context, span,
 * metrics, log) with the same handler; its answer, messages and failure (the
 * fields of the status it would have ended with) go back with its id. A `cancel`
 * frame, or the stream lost, cancels a call as a cancelled call would be. When the
 * server stops, new calls are refused `unavailable` and the stream ends once its
 * calls are done, so a graceful stop does not wait on it.
 */
export function serveCarried<Req, Res, Msg>(
  server: GrpcServer,
  servicePath: string,
  methods: CarriedMethods<Req, Res, Msg>,
  stream: grpc.ServerDuplexStream<CarriedFrame<Req>, CarriedReply<Res, Msg>>,
): void {
  const calls = new Map<number, CarriedContext>();
  let halfClosed = false;
  let draining = false;
  let closed = false;
  let drained: Promise<void> | undefined;
  const stopDraining = server.onShutdown(() => {
    draining = true;
    endIfIdle();
  });
  function endIfIdle(): void {
    if ((halfClosed || draining) && calls.size === 0 && !closed) {
      closed = true;
      stopDraining();
      stream.end();
    }
  }
  function lost(): void {
    if (closed) return;
    closed = true;
    stopDraining();
    for (const ctx of calls.values()) ctx.cancel();
  }
  const write = (reply: CarriedReply<Res, Msg>): boolean => (closed ? true : stream.write(reply));
  const drain = (): Promise<void> =>
    (drained ??= new Promise<void>((resolve) => {
      const done = () => {
        stream.off("drain", done);
        stream.off("close", done);
        drained = undefined;
        resolve();
      };
      stream.on("drain", done);
      stream.on("close", done);
    }));

  function start(id: number, call: NonNullable<CarriedFrame<Req>["call"]>): void {
    if (draining || closed) {
      write({ id, error: toErrorFields(new AppError("unavailable", "The service is stopping; try again.")) });
      return;
    }
    const unary = methods.unary[call.method];
    const streaming = methods.streaming[call.method];
    if (!unary && !streaming) {
      write({ id, error: toErrorFields(new AppError("internal_error", `${call.method} is not carried`)) });
      return;
    }
    const ctx = new CarriedContext(
      isId(call.request_id) ? call.request_id : newId("req"),
      ACTOR.test(call.actor) ? call.actor : undefined,
      call.traceparent,
      call.deadline_ms > 0 ? new Date(Date.now() + call.deadline_ms) : undefined,
    );
    calls.set(id, ctx);
    const request = call.request as Req;
    const send = async (message: Msg): Promise<void> => {
      if (ctx.cancelled || closed) throw new Error("call cancelled");
      if (!write({ id, message })) await drain();
      while (ctx.paused && !ctx.cancelled) await ctx.resumed();
      if (ctx.cancelled || closed) throw new Error("call cancelled");
    };
    server.runCarried<Res | undefined>(
      `${servicePath}/${call.method}`,
      ctx,
      unary ? () => unary(request, ctx) : () => streaming!(request, ctx, send).then(() => undefined),
      (err, result) => {
        calls.delete(id);
        if (!ctx.cancelled) write(err !== undefined ? { id, error: toErrorFields(err) } : unary ? { id, response: result as Res } : { id, end: true });
        endIfIdle();
      },
    );
  }

  stream.on("data", (frame: CarriedFrame<Req>) => {
    if (frame.kind === "call" && frame.call) start(frame.id, frame.call);
    else if (frame.kind === "cancel") calls.get(frame.id)?.cancel();
    else if (frame.kind === "pause") calls.get(frame.id)?.pause();
    else if (frame.kind === "resume") calls.get(frame.id)?.resume();
  });
  stream.on("end", () => {
    halfClosed = true;
    endIfIdle();
  });
  stream.on("cancelled", lost);
  stream.on("error", lost);
  stream.on("close", lost);
}
