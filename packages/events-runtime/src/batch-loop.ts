import type { Logger } from "@gateway/logger";

export type BatchLoopOptions = {
  /** One round: handles at most `batchSize` items and returns how many it handled. */
  round: () => Promise<number>;
  batchSize: number;
  /** Fallback interval for work no `kick` announced (other replicas, crashes). */
  pollMs: number;
  /**
   * While rounds keep finding nothing, the wait between polls doubles from `pollMs` up to
   * this (default `pollMs`: a fixed interval). Any kick or any work found resets it, so an
   * idle process polls rarely while every commit it makes is still handled at once.
   */
  maxPollMs?: number;
  /** After a kick, wait this long so the next commits' items go in the same round; 0: at once. */
  lingerMs: number;
  /**
   * Above `lingerMs`: the linger follows the rate (default `lingerMs`: fixed). A round that
   * a kick started and that came back with less than a quarter of a batch doubles it, up to
   * this; a fuller one halves it, down to `lingerMs`. At a low rate each round then waits
   * longer and carries more (fewer rounds, statements and wake-ups per item); at a high rate
   * rounds fill within the short linger anyway.
   */
  maxLingerMs?: number;
  /** Run rounds until the work is done when stopped (relays: yes; deliveries that call out: no). Default true. */
  flushOnStop?: boolean;
  log: Logger;
  /** Log lines: a failed round (retried with backoff) and a failed final flush. */
  messages: { failed: string; finalFlushFailed: string };
  onFailure?: () => void;
};

/**
 * The schedule every relay and delivery queue shares: a round after each kick (once
 * the linger is over), one per poll otherwise, the next at once while rounds come
 * back full or a kick arrived during one; a failed round backs off exponentially up
 * to 5 s. Polls that find nothing space out (doubling up to `maxPollMs`), and work
 * known to fall due later (a retry) is announced with `wakeBy`: the cost of an idle
 * loop is proportional to the work there is, not to the time that passes.
 * `stop` ends the loop and then flushes what is left once (unless `flushOnStop` is false).
 */
export class BatchLoop {
  private lingerTimer: NodeJS.Timeout | undefined;
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wake: (() => void) | undefined;
  private sleepTimer: NodeJS.Timeout | undefined;
  private sleepUntil: number | undefined;
  private kicked = false;
  private idleWait: number;
  private linger: number;
  /** The round under way was started by a kick's linger (its size says something about the rate). */
  private lingered = false;
  /** Times announced by `wakeBy`, earliest first at index 0 (a binary min-heap). */
  private readonly due: number[] = [];

  constructor(private readonly options: BatchLoopOptions) {
    this.idleWait = options.pollMs;
    this.linger = options.lingerMs;
  }

  /** The linger a kick waits now (between `lingerMs` and `maxLingerMs`). */
  get lingerMs(): number {
    return this.linger;
  }

  /** The wait before the next poll that no kick interrupts (grows while polls find nothing). */
  get nextPollMs(): number {
    return this.idleWait;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Something was committed: run a round soon (after the linger) rather than at the next poll. */
  kick(): void {
    this.kicked = true;
    this.idleWait = this.options.pollMs;
    if (this.linger === 0) {
      this.lingered = true;
      this.wake?.();
      return;
    }
    this.lingerTimer ??= setTimeout(() => {
      this.lingerTimer = undefined;
      this.lingered = true;
      this.wake?.();
    }, this.linger);
  }

  /** Work falls due at `at` (epoch ms), for example a retry: a round runs no later than then. */
  wakeBy(at: number): void {
    if (!this.running) return;
    pushHeap(this.due, at);
    const done = this.wake;
    if (done && this.sleepUntil !== undefined && at < this.sleepUntil) {
      clearTimeout(this.sleepTimer);
      this.sleepUntil = at;
      this.sleepTimer = setTimeout(done, Math.max(0, at - Date.now()));
      this.sleepTimer.unref();
    }
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

  /** Stops the loop, then handles what is left (unless `flushOnStop` is false). */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
    this.wake?.();
    await this.loopDone;
    if (this.options.flushOnStop === false) return;
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
      // Work announced for now or earlier is this round's to find; later work stays announced.
      while (this.due.length > 0 && this.due[0]! <= Date.now()) popHeap(this.due);
      let handled = 0;
      const lingered = this.lingered;
      this.lingered = false;
      try {
        handled = await this.options.round();
        failures = 0;
        if (lingered) this.adapt(handled);
      } catch (err) {
        failures++;
        this.options.onFailure?.();
        this.options.log.warn({ err, failures }, this.options.messages.failed);
        await this.sleep(Math.min(5_000, 100 * 2 ** Math.min(failures, 6)));
        continue;
      }
      // Kicked while handling, and the linger already over: go again at once.
      if (handled >= this.options.batchSize || (this.kicked && !this.lingerTimer)) continue;
      if (handled > 0) this.idleWait = this.options.pollMs;
      let wait = this.idleWait;
      if (handled === 0) this.idleWait = Math.min(this.options.maxPollMs ?? this.options.pollMs, this.idleWait * 2);
      if (this.due.length > 0) wait = Math.min(wait, Math.max(0, this.due[0]! - Date.now()));
      await this.sleep(wait);
    }
  }

  private adapt(handled: number): void {
    const max = this.options.maxLingerMs ?? this.options.lingerMs;
    if (max <= this.options.lingerMs) return;
    this.linger =
      handled * 4 < this.options.batchSize ? Math.min(max, Math.max(1, this.linger * 2)) : Math.max(this.options.lingerMs, Math.floor(this.linger / 2));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(this.sleepTimer);
        this.sleepTimer = undefined;
        this.sleepUntil = undefined;
        this.wake = undefined;
        resolve();
      };
      this.wake = done;
      this.sleepUntil = Date.now() + ms;
      this.sleepTimer = setTimeout(done, ms);
      this.sleepTimer.unref();
    });
  }
}

function pushHeap(heap: number[], value: number): void {
  heap.push(value);
  for (let i = heap.length - 1; i > 0; ) {
    const parent = (i - 1) >> 1;
    if (heap[parent]! <= heap[i]!) break;
    [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
    i = parent;
  }
}

function popHeap(heap: number[]): void {
  const last = heap.pop()!;
  if (heap.length === 0) return;
  heap[0] = last;
  for (let i = 0; ; ) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && heap[l]! < heap[m]!) m = l;
    if (r < heap.length && heap[r]! < heap[m]!) m = r;
    if (m === i) return;
    [heap[m], heap[i]] = [heap[i]!, heap[m]!];
    i = m;
  }
}
