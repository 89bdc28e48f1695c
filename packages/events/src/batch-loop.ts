import type { Logger } from "@gateway/logger";

export type BatchLoopOptions = {
  /** One round: publishes at most `batchSize` events and returns how many it published. */
  round: () => Promise<number>;
  batchSize: number;
  /** Fallback interval for work no `kick` announced (other replicas, crashes). */
  pollMs: number;
  /** After a kick, wait this long so the next commits' events leave in the same round; 0: at once. */
  lingerMs: number;
  log: Logger;
  /** Log lines: a failed round (retried with backoff) and a failed final flush. */
  messages: { failed: string; finalFlushFailed: string };
  onFailure?: () => void;
};

/**
 * The schedule every relay shares: a round after each kick (once the linger is
 * over), one per poll otherwise, the next at once while rounds come back full or
 * a kick arrived during one; a failed round backs off exponentially up to 5 s.
 * `stop` ends the loop and then flushes what is left once.
 */
export class BatchLoop {
  private lingerTimer: NodeJS.Timeout | undefined;
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wake: (() => void) | undefined;
  private kicked = false;

  constructor(private readonly options: BatchLoopOptions) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Something was committed: run a round soon (after the linger) rather than at the next poll. */
  kick(): void {
    this.kicked = true;
    if (this.options.lingerMs === 0) {
      this.wake?.();
      return;
    }
    this.lingerTimer ??= setTimeout(() => {
      this.lingerTimer = undefined;
      this.wake?.();
    }, this.options.lingerMs);
  }

  /** Runs rounds until one comes back short of a full batch (or an error stops it). Returns the count. */
  async flush(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.options.round();
      total += n;
      if (n < this.options.batchSize) return total;
    }
  }

  /** Stops the loop, then publishes what is left. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.wake?.();
    await this.loopDone;
    try {
      await this.flush();
    } catch (err) {
      this.options.log.warn({ err }, this.options.messages.finalFlushFailed);
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.kicked = false;
      let published = 0;
      try {
        published = await this.options.round();
        failures = 0;
      } catch (err) {
        failures++;
        this.options.onFailure?.();
        this.options.log.warn({ err, failures }, this.options.messages.failed);
        await this.sleep(Math.min(5_000, 100 * 2 ** Math.min(failures, 6)));
        continue;
      }
      // Kicked while publishing, and the linger already over: go again at once.
      if (published === this.options.batchSize || (this.kicked && !this.lingerTimer)) continue;
      await this.sleep(this.options.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = undefined;
        resolve();
      }
      this.wake = done;
    });
  }
}
