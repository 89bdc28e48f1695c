/**
 * Group commit: writes that arrive while earlier ones are being committed wait
 * and are committed together. An item is sent at once when one of
 * `concurrency` slots is free; otherwise it waits, and the next free slot takes
 * everything that waited (at most `maxBatch`) as one call of `run`. There is no
 * timer: at low load every batch has one item and nothing waits; under load
 * batches grow by themselves, and with them the writes per round trip, per
 * commit and per disk flush.
 *
 * `run` answers one result per item, in order. If it throws, the batch is run
 * again one item at a time, in submission order, so a failure belongs to the
 * item that caused it and the others still commit; a single item's failure
 * rejects that item only.
 */
export type GroupCommitOptions<I, O> = {
  run(items: I[]): Promise<O[]>;
  maxBatch?: number;
  concurrency?: number;
  /** Told the size of every call of `run` (for a batch-size metric). */
  onBatch?(size: number): void;
  /** Told when a batch of several failed and is being retried item by item. */
  onBatchFailure?(err: unknown, size: number): void;
  /**
   * false: a failed batch fails every item with the batch's error, without retries
   * (for a `run` whose items report their own failures in their results, so a
   * failure of the whole can only be one that hits every item, e.g. transport).
   */
  isolateFailures?: boolean;
};

type Waiting<I, O> = { item: I; resolve(value: O): void; reject(err: unknown): void };

export class GroupCommit<I, O> {
  private readonly waiting: Waiting<I, O>[] = [];
  private inFlight = 0;
  private readonly maxBatch: number;
  private readonly concurrency: number;

  constructor(private readonly options: GroupCommitOptions<I, O>) {
    this.maxBatch = options.maxBatch ?? 200;
    this.concurrency = options.concurrency ?? 1;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.concurrency && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxBatch);
      this.inFlight++;
      void this.commit(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async commit(batch: Waiting<I, O>[]): Promise<void> {
    let results: O[];
    try {
      this.options.onBatch?.(batch.length);
      results = await this.options.run(batch.map((w) => w.item));
      if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} answered ${results.length} results`);
    } catch (err) {
      if (batch.length === 1 || this.options.isolateFailures === false) {
        for (const w of batch) w.reject(err);
        return;
      }
      this.options.onBatchFailure?.(err, batch.length);
      for (const w of batch) await this.commit([w]); // in submission order: the first of two rivals wins
      return;
    }
    batch.forEach((w, i) => {
      w.resolve(results[i]!);
    });
  }
}
