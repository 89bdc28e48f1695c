import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { SeriesCounter } from "./series-counter.js";

describe("SeriesCounter", () => {
  it("counts per label values and renders in Prometheus text with the registry's default labels", async () => {
    const registry = new Registry();
    registry.setDefaultLabels({ service: "test" });
    const spend = new SeriesCounter("x_spend_units_total", "Spend.", ["tenant", "model"], [registry]);
    const one = new SeriesCounter("x_requests_total", "Requests.", ["status"], [registry]);
    const three = new SeriesCounter("x_tokens_total", "Tokens.", ["tenant", "model", "kind"], [registry]);
    spend.series("ten_a", "small").value += 5;
    spend.series("ten_a", "small").value += 2;
    spend.series("ten_b", "small").value += 1;
    expect(spend.series("ten_a", "small")).toBe(spend.series("ten_a", "small")); // the same cell, no new object
    one.series("200").value += 1;
    three.series("ten_a", "small", "input").value += 10;
    three.series("ten_a", "small", "output").value += 3;
    const text = await registry.metrics();
    expect(text).toContain("# TYPE x_spend_units_total counter");
    expect(text).toContain('x_spend_units_total{tenant="ten_a",model="small",service="test"} 7');
    expect(text).toContain('x_spend_units_total{tenant="ten_b",model="small",service="test"} 1');
    expect(text).toContain('x_requests_total{status="200",service="test"} 1');
    expect(text).toContain('x_tokens_total{tenant="ten_a",model="small",kind="output",service="test"} 3');
    spend.reset();
    expect(await registry.metrics()).not.toContain("ten_b");
  });

  it("takes one to three labels", () => {
    expect(() => new SeriesCounter("x", "x", [])).toThrow();
    expect(() => new SeriesCounter("x", "x", ["a", "b", "c", "d"])).toThrow();
  });
});
