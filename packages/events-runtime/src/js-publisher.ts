import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type PubAck, type Subscription } from "nats";

/** What the kit needs to publish to JetStream: `JetStreamClient` has it, and so has `JetStreamPublisher`. */
export type JsPublish = {
  publish(subject: string, payload: Uint8Array, options: { msgID: string; headers: MsgHdrs; timeout: number }): Promise<PubAck>;
};

const decoder = new TextDecoder();

type Pending = { resolve: (ack: PubAck) => void; reject: (err: Error) => void; deadline: number; subject: string };

/** A failed JetStream publish: `code` "503" (no stream answered), "timeout", or the JetStream API error code. */
export class PublishError extends Error {
  override readonly name = "PublishError";
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * JetStream publishes without the cost nats.js 2.29 adds to each one. Its
 * `js.publish` is a `nc.request`, and every request, when its answer arrives,
 * ends with `RequestOne.cancel()`, which rejects the already-resolved promise with
 * a new `NatsError(Cancelled)`: an Error, so a stack capture, for every
 * successful publish whatever `noAsyncTraces` says. Each request also gets its own
 * timer (`setTimeout` in a promise raced against the answer).
 *
 * Here a publish is a plain `nc.publish` with a reply subject under one inbox
 * subscription of our own: the answer (the PubAck) settles a promise found by
 * token, timeouts are checked by one sweep for all publishes in flight, and an
 * Error is built only when a publish fails. Same wire traffic as `js.publish`
 * (message id header for JetStream's dedupe, the ack as the reply).
 */
export class JetStreamPublisher implements JsPublish {
  private readonly prefix: string;
  private sub: Subscription | undefined;
  private readonly pending = new Map<string, Pending>();
  private next = 0;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly nc: NatsConnection) {
    this.prefix = `${createInbox()}.`;
  }

  publish(subject: string, payload: Uint8Array, options: { msgID: string; headers: MsgHdrs; timeout: number }): Promise<PubAck> {
    this.sub ??= this.nc.subscribe(`${this.prefix}*`, { callback: (err, msg) => this.answer(err, msg) });
    options.headers.set("Nats-Msg-Id", options.msgID);
    const token = (this.next++).toString(36);
    return new Promise<PubAck>((resolve, reject) => {
      this.pending.set(token, { resolve, reject, deadline: Date.now() + options.timeout, subject });
      try {
        this.nc.publish(subject, payload, { reply: this.prefix + token, headers: options.headers });
      } catch (err) {
        this.pending.delete(token);
        reject(err as Error);
        return;
      }
      this.sweeper ??= setInterval(() => this.sweep(), 250);
    });
  }

  /** Fails what is in flight (the connection is going away). */
  close(): void {
    for (const [token, p] of this.pending) {
      this.pending.delete(token);
      p.reject(new PublishError(`publish to ${p.subject}: publisher closed`, "closed"));
    }
    this.sub?.unsubscribe();
    this.sub = undefined;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** How many publishes await their ack (tests, metrics). */
  get inFlight(): number {
    return this.pending.size;
  }

  private answer(err: Error | null, msg: Msg): void {
    const token = msg?.subject.slice(this.prefix.length);
    const p = token === undefined ? undefined : this.pending.get(token);
    if (!p || token === undefined) return; // timed out already
    this.pending.delete(token);
    if (err) {
      p.reject(err);
      return;
    }
    if (msg.data.length === 0) {
      // A status without a body: 503 is "no responders" (no stream takes the subject).
      const code = String(msg.headers?.code ?? "unknown");
      p.reject(new PublishError(`publish to ${p.subject}: ${code === "503" ? "no responders" : `status ${code}`}`, code));
      return;
    }
    let ack: PubAck & { error?: { code: number; err_code?: number; description: string } };
    try {
      ack = JSON.parse(decoder.decode(msg.data)) as typeof ack;
    } catch {
      p.reject(new PublishError(`publish to ${p.subject}: unreadable ack`, "invalid_ack"));
      return;
    }
    if (ack.error) {
      p.reject(new PublishError(`publish to ${p.subject}: ${ack.error.description}`, String(ack.error.code)));
      return;
    }
    if (!ack.stream) {
      p.reject(new PublishError(`publish to ${p.subject}: invalid ack`, "invalid_ack"));
      return;
    }
    ack.duplicate = ack.duplicate ?? false;
    p.resolve(ack);
  }

  /** Times out publishes past their deadline. The map holds them in the order sent. */
  private sweep(): void {
    const now = Date.now();
    for (const [token, p] of this.pending) {
      if (p.deadline > now) continue;
      this.pending.delete(token);
      p.reject(new PublishError(`publish to ${p.subject}: timeout`, "timeout"));
    }
    if (this.pending.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }
}
