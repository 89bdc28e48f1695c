import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { LATENCY_BUCKETS } from "./index.js";
import { SeriesHistogram } from "./series-histogram.js";

/** The same metric both ways, each in its own registry with the default labels a service sets. */
function pair(labelNames: string[], buckets = LATENCY_BUCKETS) {
  const registries = [new Registry(), new Registry()] as const;
  for (const r of registries) r.setDefaultLabels({ service: "edge" });
  const config = { name: "t_seconds", help: "A test histogram.", labelNames, buckets };
  const plain = new Histogram({ ...config, registers: [registries[0]] });
  const series = new SeriesHistogram({ ...config, registers: [registries[1]] });
  const texts = async () => Promise.all(registries.map((r) => r.metrics()));
  return { plain, series, texts };
}

const VALUES = [0, 0.0005, 0.0004999, 0.00051, 0.003, 0.01, 0.0123456789, 0.7, 1, 29.999, 30, 30.0001, 1e6, -0.5];

describe("SeriesHistogram", () => {
  it("scrapes as prom-client's histogram fed the same observations (labels, buckets, +Inf, sum, count)", async () => {
    const { plain, series, texts } = pair(["method", "route", "status"]);
    const labelSets = [
      ["POST", "/v1/apps/ai/:alias/v1/chat/completions", "200"],
      ["GET", "unmatched", "404"],
      ["POST", "/v1/apps/ai/:alias/v1/chat/completions", "402"],
    ] as const;
    VALUES.forEach((v, i) => {
      const [method, route, status] = labelSets[i % labelSets.length]!;
      plain.observe({ method, route, status }, v);
      series.series(method, route, status).observe(v);
    });
    const [a, b] = await texts();
    expect(b).toBe(a);
    expect(b).toContain('t_seconds_bucket{le="+Inf",service="edge",method="POST",route="/v1/apps/ai/:alias/v1/chat/completions",status="200"} 5');
  });

  it("scrapes as prom-client's with no labels, and after a reset", async () => {
    const { plain, series, texts } = pair([], [1, 2, 4, 8]);
    for (const v of [0.5, 1, 3, 9, 2]) {
      plain.observe(v);
      series.series().observe(v);
    }
    let [a, b] = await texts();
    expect(b).toBe(a);
    plain.reset();
    series.reset();
    plain.observe(3);
    series.series().observe(3);
    [a, b] = await texts();
    expect(b).toBe(a);
  });

  it("adds to a series prom-client's own observe made first, and refuses what prom-client refuses", async () => {
    const { plain, series, texts } = pair(["kind"]);
    plain.observe({ kind: "a" }, 0.2);
    series.observe({ kind: "a" }, 0.2);
    plain.observe({ kind: "a" }, 0.3);
    series.series("a").observe(0.3);
    const [a, b] = await texts();
    expect(b).toBe(a);
    expect(() => series.series("a").observe(Number.NaN)).toThrow(TypeError);
    expect(() => new SeriesHistogram({ name: "x", help: "x", labelNames: ["a", "b", "c", "d"] })).toThrow();
  });
});
