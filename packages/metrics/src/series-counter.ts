import type { Registry } from "prom-client";

/** One series of a {@link SeriesCounter}: add to `value` (never subtract). */
export type Series = { value: number };

type Node = Map<string, Node | Series>;

function branch(node: Node, key: string): Node {
  let next = node.get(key) as Node | undefined;
  if (!next) {
    next = new Map();
    node.set(key, next);
  }
  return next;
}

function leaf(node: Node, key: string): Series {
  let cell = node.get(key) as Series | undefined;
  if (!cell) {
    cell = { value: 0 };
    node.set(key, cell);
  }
  return cell;
}

/**
 * A Prometheus counter for hot paths: its series are kept in nested maps by label
 * value, so counting on a known series is two or three map lookups and an addition,
 * with no label object and no label-hash string per increment (prom-client's
 * `inc(labels)` builds both every time; docs/decisions/0211). Registered like any
 * prom-client metric; the text is made at scrape time.
 *
 * `series(a, b, c)` takes the label values in `labelNames` order (fixed arguments:
 * no array per call).
 */
export class SeriesCounter {
  readonly type = "counter";
  readonly aggregator = "sum";
  private readonly root: Node = new Map();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registers: Registry[] = [],
  ) {
    if (labelNames.length < 1 || labelNames.length > 3) throw new Error("a SeriesCounter has 1 to 3 labels");
    for (const registry of registers) registry.registerMetric(this as never);
  }

  /** The series of these label values (made on first use). */
  series(a: string, b = "", c = ""): Series {
    const depth = this.labelNames.length;
    if (depth === 1) return leaf(this.root, a);
    if (depth === 2) return leaf(branch(this.root, a), b);
    return leaf(branch(branch(this.root, a), b), c);
  }

  /** prom-client's metric interface: every series with its labels. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: { value: number; labels: Record<string, string> }[] }> {
    const values: { value: number; labels: Record<string, string> }[] = [];
    const walk = (node: Node, depth: number, labels: Record<string, string>) => {
      for (const [key, child] of node) {
        const next = { ...labels, [this.labelNames[depth]!]: key };
        if (depth === this.labelNames.length - 1) values.push({ value: (child as Series).value, labels: next });
        else walk(child as Node, depth + 1, next);
      }
    };
    walk(this.root, 0, {});
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.root.clear();
  }
}
