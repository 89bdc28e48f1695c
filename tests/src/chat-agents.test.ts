// A real agent loop from an agent framework on npm (OpenAI's Agents SDK, `@openai/agents`,
// on its Chat Completions model), pointed at a managed instance with its tools, against
// the mock provider: the framework sends its own requests (tools from zod schemas, the
// assistant's tool calls, the tool results), runs the tool the model calls, and ends with
// the model's answer. Nobody here wrote that client. Every turn it took is a usage record
// charged at the contract's cost of its usage, and the balance drops by their sum.
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { MockProvider } from "@gateway/mock-provider";
import type { Stack } from "@gateway/testkit";
import { balanceWithin1s, customer, expectedCost, meteredStack, type Customer, type ManagedModel, type Operator } from "./support/managed-ai.js";

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;
const metered = meteredStack();
beforeAll(() => {
  ({ stack, provider, op, model } = metered);
  setTracingDisabled(true); // no trace export to OpenAI's servers
});
beforeEach(() => provider.reset());

function weatherAgent(calls: string[]) {
  const getWeather = tool({
    name: "get_weather",
    description: "The weather now in a city.",
    parameters: z.object({ city: z.string().describe("City name"), unit: z.enum(["celsius", "fahrenheit"]) }),
    execute: async ({ city, unit }) => {
      calls.push(`${city}/${unit}`);
      return `21 degrees ${unit} and clear in ${city}`;
    },
  });
  return new Agent({ name: "Weather", instructions: "Answer with the weather tool.", model: "small", tools: [getWeather], modelSettings: { maxTokens: 64 } });
}

function runner(c: Customer) {
  return new Runner({ modelProvider: new OpenAIProvider({ apiKey: c.key, baseURL: `${stack.edgeUrl}/v1/apps/ai/agents/v1`, useResponses: false }) });
}

/** The tenant's usage records: each completed and charged the contract's cost of its usage; returns their sum. */
async function charges(c: Customer): Promise<{ turns: number; total: bigint }> {
  const rows = await stack.sql<{ status: string; final_units: string; reserved_units: string; usage_json: string }>(
    "managed-ai",
    "SELECT status, final_units::text, reserved_units::text, usage_json FROM usage_records WHERE tenant_id = $1",
    [c.tenantId],
  );
  let total = 0n;
  for (const row of rows) {
    const usage = JSON.parse(row.usage_json) as { prompt_tokens: number; completion_tokens: number };
    const charge = expectedCost(BigInt(usage.prompt_tokens), BigInt(usage.completion_tokens), model);
    expect(row).toMatchObject({ status: "completed", final_units: charge.toString() });
    expect(BigInt(row.reserved_units)).toBeGreaterThanOrEqual(expectedCost(BigInt(usage.prompt_tokens), 64n, model));
    total += charge;
  }
  return { turns: rows.length, total };
}

describe("an agent framework's tool loop through a managed instance", () => {
  for (const stream of [false, true]) {
    it(`runs the tool the model calls and ends with the model's answer${stream ? ", streamed" : ""}; the turns' charges add up`, async () => {
      const c = await customer(stack, op, { units: 1_000_000, alias: "agents", defaultModel: "small" });
      const calls: string[] = [];
      const agent = weatherAgent(calls);
      const result = stream
        ? await runner(c).run(agent, "What is the weather in Paris?", { stream: true })
        : await runner(c).run(agent, "What is the weather in Paris?");
      if ("completed" in result) {
        for await (const _event of result.toStream()) {
          // drain the stream: the run ends with it
        }
        await result.completed;
      }
      // The framework ran the tool with the model's arguments, sent its result back, and got the answer.
      expect(calls).toEqual(["mock/celsius"]);
      expect(result.finalOutput).toBe("Mock reply to tool results: 21 degrees celsius and clear in mock");

      const requests = provider.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body as Record<string, any>);
      expect(requests).toHaveLength(2);
      expect(requests[0]!.tools[0]).toMatchObject({ type: "function", function: { name: "get_weather", parameters: { required: ["city", "unit"] } } });
      const [, assistant, result_] = requests[1]!.messages.slice(1);
      expect(assistant).toMatchObject({ role: "assistant", tool_calls: [{ type: "function", function: { name: "get_weather" } }] });
      expect(result_).toMatchObject({ role: "tool", tool_call_id: assistant.tool_calls[0].id, content: "21 degrees celsius and clear in mock" });

      const { turns, total } = await charges(c);
      expect(turns).toBe(2);
      expect(await balanceWithin1s(stack, c, { available_units: 1_000_000 - Number(total), reserved_units: 0 })).toEqual({
        available_units: 1_000_000 - Number(total),
        reserved_units: 0,
      });
    });
  }
});
