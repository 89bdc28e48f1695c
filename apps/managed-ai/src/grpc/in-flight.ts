/**
 * The invocations this process is still working on. grpc-js's graceful stop
 * waits only for calls whose stream is open; a metered call whose client left
 * (the edge cancelled it) has no stream any more but is still finishing its
 * provider call and settling (docs/decisions/0177). Shutdown waits for these
 * too, before the ledger client and the database close under them.
 */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();
  private idle: (() => void)[] = [];

  get size(): number {
    return this.running.size;
  }

  /** Runs `work`, counted until it settles (either way); its result is the caller's. */
  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    const done = () => {
      this.running.delete(work);
      if (this.running.size === 0) for (const resolve of this.idle.splice(0)) resolve();
    };
    work.then(done, done);
    return work;
  }

  /** Resolves once nothing is running (at once when nothing is). */
  drain(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }
}
