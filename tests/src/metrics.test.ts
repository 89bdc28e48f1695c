import { beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import type { Stack } from "@gateway/testkit";
import { byokInstance, customerProvider } from "./support/byok.js";
import { balanceWithin1s, customer, meteredStack, type Customer, type Operator } from "./support/managed-ai.js";

// The operations metrics (CONTRACT.md section 13, docs/decisions/0211): their names and values
// after a known sequence of calls, on the services' metrics ports and never on the public route.
let stack: Stack;
let op: Operator;
let provider: MockProvider;
const metered = meteredStack({ env: { "managed-ai": { ALLOW_PRIVATE_TARGETS: "true" } } });
beforeAll(() => {
  ({ stack, op, provider } = metered);
});

/** The samples of one metric in Prometheus text: labels (without `service`) → value. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    const m = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    delete labels.service;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

const value = (text: string, name: string, labels: Record<string, string>) =>
  samples(text, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length)
    .reduce((sum, s) => sum + s.value, 0);

const scrape = async (url: string) => (await fetch(url)).text();

function chat(c: Customer, alias: string, body: Record<string, unknown> = {}, base = stack.edgeUrl) {
  return fetch(`${base}/v1/apps/ai/${alias}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": c.key },
    body: JSON.stringify({ max_tokens: 7, messages: [{ role: "user", content: "Count me" }], ...body }),
  });
}

describe("operations metrics", () => {
  it("count requests by status, spend and tokens by tenant and model, and the overhead without the provider's time", async () => {
    const a = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const broke = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "small" });
    let byokApi: MockProvider | undefined;
    try {
      byokApi = await customerProvider();
      expect((await byokInstance(stack, a, "mine", byokApi, { pricing: { input_units_per_mtok: 1_000_000, output_units_per_mtok: 1_000_000 } })).status).toBe(
        201,
      );
      // Three JSON calls and a stream, each 300 ms at the provider.
      provider.set({ delayMs: 300 });
      for (let i = 0; i < 3; i++) expect((await chat(a, "chat")).status).toBe(200);
      const stream = await chat(a, "chat", { stream: true });
      expect(stream.status).toBe(200);
      expect(await stream.text()).toContain("[DONE]");
      provider.set({ delayMs: undefined });
      // A refusal for want of balance, a provider failure, and a bring-your-own-key call.
      expect((await chat(broke, "chat")).status).toBe(402);
      provider.set({ failStatus: 500 });
      expect((await chat(a, "chat")).status).toBe(502);
      provider.set({ failStatus: undefined });
      expect((await chat(a, "mine", { model: "mock-small" })).status).toBe(200);
    } finally {
      await byokApi?.close();
    }

    const records = await stack.sql<{ mode: string; status: string; final_units: string | null; usage_json: string | null }>(
      "managed-ai",
      "SELECT mode, status, final_units::text, usage_json FROM usage_records WHERE tenant_id = $1",
      [a.tenantId],
    );
    const charged = records.filter((r) => r.mode === "managed" && r.status === "completed");
    expect(charged).toHaveLength(4);
    const spent = charged.reduce((s, r) => s + Number(r.final_units), 0);
    const tokens = (mode: string, kind: "prompt_tokens" | "completion_tokens") =>
      records.filter((r) => r.mode === mode && r.usage_json).reduce((s, r) => s + (JSON.parse(r.usage_json!)[kind] as number), 0);

    const text = await scrape(stack.metricsUrl("managed-ai"));
    expect(text).toContain("# TYPE gateway_ai_requests_total counter");
    expect(value(text, "gateway_ai_requests_total", { model: "small", status: "200" })).toBe(4);
    expect(value(text, "gateway_ai_requests_total", { model: "small", status: "402" })).toBe(1);
    expect(value(text, "gateway_ai_requests_total", { model: "small", status: "502" })).toBe(1);
    expect(value(text, "gateway_ai_requests_total", { model: "mock-small", status: "200" })).toBe(1);
    expect(value(text, "gateway_ai_spend_units_total", { tenant: a.tenantId, model: "small" })).toBe(spent);
    expect(samples(text, "gateway_ai_spend_units_total").filter((s) => s.labels.tenant !== a.tenantId)).toEqual([]); // byok and refusals pay nothing
    expect(value(text, "gateway_ai_tokens_total", { tenant: a.tenantId, model: "small", kind: "input" })).toBe(tokens("managed", "prompt_tokens"));
    expect(value(text, "gateway_ai_tokens_total", { tenant: a.tenantId, model: "small", kind: "output" })).toBe(tokens("managed", "completion_tokens"));
    expect(value(text, "gateway_ai_tokens_total", { tenant: a.tenantId, model: "mock-small", kind: "input" })).toBe(tokens("byok", "prompt_tokens"));
    expect(tokens("managed", "completion_tokens")).toBeGreaterThan(0);
    // Seven calls timed; the four slow ones spent 300 ms at the provider, which the overhead leaves out.
    expect(value(text, "gateway_ai_overhead_seconds_count", {})).toBe(7);
    const overhead = value(text, "gateway_ai_overhead_seconds_sum", {});
    expect(overhead).toBeGreaterThan(0);
    expect(overhead).toBeLessThan(4 * 0.3);

    // The ledger's available balance, as the balance view shows it.
    const view = await balanceWithin1s(stack, a, { available_units: 1_000_000 - spent });
    expect(view.available_units).toBe(1_000_000 - spent);
    const ledger = await scrape(stack.metricsUrl("ledger"));
    expect(ledger).toContain("# TYPE gateway_ledger_available_units gauge");
    expect(value(ledger, "gateway_ledger_available_units", { tenant: a.tenantId })).toBe(view.available_units);
    expect(value(ledger, "gateway_ledger_available_units", { tenant: broke.tenantId })).toBe(0);

    // Never on a public route.
    const publicMetrics = await (await fetch(`${stack.edgeUrl}/metrics`)).text();
    expect(publicMetrics).not.toMatch(/gateway_ai_|gateway_ledger_available/);
  });

  it("drop the tenant label when told to (large fleets)", async () => {
    const replica = await stack.addReplica("managed-ai", "managed-ai-2", { METRICS_TENANT_LABEL: "false" });
    const edge2 = await stack.addEdge("edge-2", { MANAGED_AI_GRPC_URL: replica });
    const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
    const res = await chat(c, "chat", {}, edge2);
    expect(res.status).toBe(200);
    const units = Math.round(Number(res.headers.get("x-service-final-cost")) * 10_000);
    const text = await scrape(stack.metricsUrl("managed-ai-2"));
    expect(samples(text, "gateway_ai_spend_units_total")).toEqual([{ labels: { model: "small" }, value: units }]);
    expect(samples(text, "gateway_ai_tokens_total").every((s) => s.labels.tenant === undefined)).toBe(true);
    expect(value(text, "gateway_ai_requests_total", { model: "small", status: "200" })).toBe(1);
  });
});
