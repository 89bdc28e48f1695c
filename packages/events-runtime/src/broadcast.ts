import type { NatsConnection } from "nats";
import type { Logger } from "@gateway/logger";

/**
 * A core-NATS broadcast between replicas of a service (cache invalidation). Not
 * persisted: a replica that misses one relies on its cache TTL or a version check.
 */
export class Broadcast<T> {
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly nats: NatsConnection,
    private readonly subject: string,
    private readonly logger: Logger,
  ) {}

  listen(onMessage: (message: T) => void): void {
    const sub = this.nats.subscribe(this.subject);
    void (async () => {
      for await (const msg of sub) {
        try {
          onMessage(JSON.parse(this.decoder.decode(msg.data)) as T);
        } catch (err) {
          this.logger.warn({ err, subject: this.subject }, "bad broadcast message");
        }
      }
    })();
  }

  /** Resolves once the NATS server has the message. */
  async send(message: T): Promise<void> {
    this.nats.publish(this.subject, this.encoder.encode(JSON.stringify(message)));
    await this.nats.flush();
  }
}
