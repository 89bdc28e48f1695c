import { Histogram, type HistogramConfiguration, type LabelValues } from "prom-client";

/** One series of a {@link SeriesHistogram}: `observe` a value (seconds, items, ...). */
export type HistogramSeries = { observe(value: number): void };

/** prom-client's record of one series (lib/histogram.js `createBaseValues`): what its text is made from. */
type Cell = { labels: Record<string, string>; bucketValues: Record<string, number>; sum: number; count: number };

type Node = Map<string, Node | HistogramSeries>;

/**
 * A prom-client histogram for hot paths: `series(a, b, c)` finds a series by its label
 * values in nested maps (made on first use) and `observe` adds to prom-client's own
 * record of it, so an observation builds no label object, validates no labels and hashes
 * no label string (prom-client's `observe(labels, value)` does all three every time). The
 * metric is prom-client's: registered, reset and scraped by it, its text unchanged
 * (docs/decisions/0321; series-histogram.test.ts compares the two).
 *
 * `series` takes the label values in `labelNames` order (fixed arguments: no array per call).
 */
export class SeriesHistogram<T extends string = string> extends Histogram<T> {
  private readonly root: Node = new Map();
  private readonly names: readonly string[];
  private readonly bounds: readonly number[];
  /** Each bound as the property name prom-client keeps its bucket under (`String(bound)`). */
  private readonly keys: readonly string[];

  constructor(config: HistogramConfiguration<T>) {
    if (config.enableExemplars) throw new Error("a SeriesHistogram keeps no exemplars");
    if ((config.labelNames?.length ?? 0) > 3) throw new Error("a SeriesHistogram has at most 3 labels");
    super(config);
    const self = this as unknown as { labelNames: string[]; upperBounds: number[] };
    this.names = self.labelNames;
    this.bounds = self.upperBounds;
    this.keys = this.bounds.map(String);
  }

  /** The series of these label values (made on first use, as prom-client makes it). */
  series(a = "", b = "", c = ""): HistogramSeries {
    const depth = this.names.length;
    const node = depth <= 1 ? this.root : depth === 2 ? this.branch(this.root, a) : this.branch(this.branch(this.root, a), b);
    const key = depth === 0 ? "" : depth === 1 ? a : depth === 2 ? b : c;
    let series = node.get(key) as HistogramSeries | undefined;
    if (!series) {
      series = this.cellSeries([a, b, c].slice(0, depth));
      node.set(key, series);
    }
    return series;
  }

  private branch(node: Node, key: string): Node {
    let next = node.get(key) as Node | undefined;
    if (!next) {
      next = new Map();
      node.set(key, next);
    }
    return next;
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor resets before this class's fields exist.
    this.root?.clear();
  }

  override remove(...values: string[]): void;
  override remove(labels: LabelValues<T>): void;
  override remove(...args: unknown[]): void {
    (super.remove as (...a: unknown[]) => void)(...args);
    this.root.clear();
  }

  override zero(labels: LabelValues<T>): void {
    super.zero(labels);
    this.root.clear();
  }

  /** prom-client's record of these label values (made by `zero` when there is none yet), wrapped. */
  private cellSeries(values: string[]): HistogramSeries {
    const labels: Record<string, string> = {};
    this.names.forEach((name, i) => {
      labels[name] = values[i]!;
    });
    const map = () => (this as unknown as { hashMap: Record<string, Cell> }).hashMap;
    const same = (cell: Cell) => this.names.every((name) => cell.labels[name] === labels[name]) && Object.keys(cell.labels).length === this.names.length;
    let cell = Object.values(map()).find(same);
    if (!cell) {
      super.zero(labels as never);
      cell = Object.values(map()).find(same);
      if (!cell) throw new Error("prom-client's histogram record was not found");
    }
    const { bounds, keys } = this;
    const found = cell;
    return {
      observe(value: number) {
        if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
        found.sum += value;
        found.count += 1;
        for (let i = 0; i < bounds.length; i++) {
          if (value <= bounds[i]!) {
            found.bucketValues[keys[i]!]! += 1;
            return;
          }
        }
      },
    };
  }
}
