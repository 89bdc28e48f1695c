import type * as grpc from "@grpc/grpc-js";
import type { MethodDefinition } from "@grpc/proto-loader";
import type { Contract } from "@gateway/protos";

/** The named keys of a type, without its index signature. */
type KnownKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

type DefOf<C> = C extends Contract<infer D, infer _H> ? D : never;
type HandlersOf<C> = C extends Contract<infer _D, infer H> ? H : never;
type Methods<C> = KnownKeys<DefOf<C>> & KnownKeys<HandlersOf<C>>;

/** Request as the caller writes it (optional fields, int64 as number | string). */
export type RequestIn<M> = M extends MethodDefinition<infer Req, infer _Res, infer _ReqOut, infer _ResOut> ? Req : never;
/** Response as the caller receives it (defaults filled, int64 as string). */
export type ResponseOut<M> = M extends MethodDefinition<infer _Req, infer _Res, infer _ReqOut, infer ResOut> ? ResOut : never;
/** Request as the service receives it. */
export type RequestOut<M> = M extends MethodDefinition<infer _Req, infer _Res, infer ReqOut, infer _ResOut> ? ReqOut : never;
/** Response as the service writes it. */
export type ResponseIn<M> = M extends MethodDefinition<infer _Req, infer Res, infer _ReqOut, infer _ResOut> ? Res : never;

type IsBidi<H> = H extends grpc.handleBidiStreamingCall<infer _A, infer _B> ? true : false;
type IsServerStream<H> = H extends grpc.handleServerStreamingCall<infer _A, infer _B> ? true : false;
type IsClientStream<H> = H extends grpc.handleClientStreamingCall<infer _A, infer _B> ? true : false;

export type CallContext = {
  requestId: string;
  /** The caller's principal as the edge authenticated it (`user:<id>`, `key:<id>`), if any. */
  actor: string | undefined;
  metadata: grpc.Metadata;
  /** Aborted when the caller cancels or its deadline passes. */
  signal: AbortSignal;
  deadline: Date | undefined;
};

export type UnaryMethod<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;
/** `send` resolves when the message is handed to the transport (waits on backpressure). */
export type ServerStreamMethod<Req, Res> = (request: Req, ctx: CallContext, send: (message: Res) => Promise<void>) => Promise<void>;

/**
 * A client-streaming handler: the caller's messages as an async iterable, read
 * at the handler's pace (flow control reaches the caller). When the caller
 * cancels, iteration may just end (grpc-js reports the cancellation an instant
 * later, then `ctx.signal` aborts): a protocol whose completeness matters ends
 * with an explicit last message, and treats a plain end without it as a failure.
 */
export type ClientStreamMethod<Req, Res> = (requests: AsyncIterable<Req>, ctx: CallContext) => Promise<Res>;

/**
 * A bidirectional stream's handler (docs/decisions/0246): the server checked the
 * service token when the stream opened; the handler owns the stream from there.
 */
export type BidiMethod<Req, Res> = (stream: grpc.ServerDuplexStream<Req, Res>) => void;

/** What a service implements for a contract: one async function per RPC. */
export type Implementation<C> = {
  [K in Methods<C>]: IsBidi<HandlersOf<C>[K]> extends true
    ? BidiMethod<RequestOut<DefOf<C>[K]>, ResponseIn<DefOf<C>[K]>>
    : IsServerStream<HandlersOf<C>[K]> extends true
      ? ServerStreamMethod<RequestOut<DefOf<C>[K]>, ResponseIn<DefOf<C>[K]>>
      : IsClientStream<HandlersOf<C>[K]> extends true
        ? ClientStreamMethod<RequestOut<DefOf<C>[K]>, ResponseIn<DefOf<C>[K]>>
        : UnaryMethod<RequestOut<DefOf<C>[K]>, ResponseIn<DefOf<C>[K]>>;
};

export type CallOptions = {
  /** Overrides the client's default deadline for this call. */
  deadlineMs?: number;
  signal?: AbortSignal;
  /** Defaults to the request id of the current request context. */
  requestId?: string;
  /** Defaults to the actor of the current request context. */
  actor?: string;
};

export type ResponseStream<T> = AsyncIterable<T> & { cancel(): void };

/**
 * The caller's side of a client-streaming call. `write` resolves once the
 * transport took the message (waiting on flow control) and rejects with the
 * call's error once the call has ended (e.g. the service refused early);
 * `end` half-closes and resolves with the answer; `cancel` abandons the call.
 */
export type RequestStream<Req, Res> = {
  write(message: Req): Promise<void>;
  end(): Promise<Res>;
  cancel(): void;
  /** Settles when the call ends, however it ends. */
  readonly response: Promise<Res>;
};

/** What a caller gets for a contract: promise-returning methods, streams as async iterables. */
export type PromiseClient<C> = {
  [K in Methods<C>]: IsBidi<HandlersOf<C>[K]> extends true
    ? (options?: CallOptions) => grpc.ClientDuplexStream<RequestIn<DefOf<C>[K]>, ResponseOut<DefOf<C>[K]>>
    : IsServerStream<HandlersOf<C>[K]> extends true
      ? (request: RequestIn<DefOf<C>[K]>, options?: CallOptions) => ResponseStream<ResponseOut<DefOf<C>[K]>>
      : IsClientStream<HandlersOf<C>[K]> extends true
        ? (options?: CallOptions) => RequestStream<RequestIn<DefOf<C>[K]>, ResponseOut<DefOf<C>[K]>>
        : (request: RequestIn<DefOf<C>[K]>, options?: CallOptions) => Promise<ResponseOut<DefOf<C>[K]>>;
};
