import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countTokens, embeddingTokens, promptTokens, replyFor, truncateToTokens, type MockProvider } from "@gateway/mock-provider";
import { startStack, type Stack } from "@gateway/testkit";
import {
  balance,
  customer,
  expectedCost,
  managedModel,
  mockProvider,
  operator,
  upstream,
  type Customer,
  type ManagedModel,
  type Operator,
} from "./support/managed-ai.js";
import { settledBooks } from "./support/money-audit.js";
import { eventually } from "./support/operators.js";
import { rawRequest } from "./support/raw-client.js";
import { prng } from "./support/prng.js";

/*
 * CONTRACT.md section 6, docs/decisions/0177: a client that disconnects at any
 * moment after the reservation stops the relay, not the metering. JSON chats,
 * embeddings and streams are cut at random points (seeded) on real sockets;
 * every request that reserved must end completed and charged exactly the cost
 * of the mock provider's usage, the balance must be the credit less those
 * charges, and nothing with usage may wait in review.
 */

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let model: ManagedModel;
let c: Customer;
const CREDIT = 50_000_000;

beforeAll(async () => {
  provider = await mockProvider();
  stack = await startStack({ services: ["ledger", "managed-ai"] });
  op = await operator(stack);
  await upstream(stack, op, provider, "mock");
  // Fractions of a unit per token, so that rounding up shows.
  model = await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 150_000_007, outputPerMtok: 600_000_011 });
  c = await customer(stack, op, { units: CREDIT, alias: "chat", defaultModel: "small" });
});
afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});

const messages = [{ role: "user", content: "Tell me a long story about holds, captures and voids, with many words in it." }];
const MAX_TOKENS = 30;
const texts = ["one text to embed", "and another one, a little longer: é😀"];

const request = (path: string, body: unknown) => ({
  method: "POST",
  path: `/v1/apps/ai/chat/v1/${path}`,
  headers: { "content-type": "application/json", "x-api-key": c.key },
  body: JSON.stringify(body),
});

type Kind = "json" | "stream" | "embeddings";
const requests: Record<Kind, (random: () => number) => ReturnType<typeof request>> = {
  json: () => request("chat/completions", { messages, max_tokens: MAX_TOKENS }),
  stream: (random) =>
    request("chat/completions", { messages, max_tokens: MAX_TOKENS, stream: true, ...(random() < 0.5 ? { stream_options: { include_usage: true } } : {}) }),
  embeddings: () => request("embeddings", { input: texts }),
};

describe("clients that hang up at random points", () => {
  it("are charged exactly what the provider's usage costs, and nothing with usage waits in review", async () => {
    const seed = Number(process.env.METER_SEED ?? 177);
    const random = prng(seed);
    // Slow enough that cuts land before, during and after the provider's answer.
    provider.set({ delayMs: 30, chunkDelayMs: 4 });
    let cut = 0;
    let answered = 0;
    for (let round = 0; round < 4; round++) {
      const outcomes = await Promise.all(
        Array.from({ length: 24 }, () => {
          const kind = (["json", "stream", "embeddings"] as const)[Math.floor(random() * 3)]!;
          const r = random();
          // Right after sending; after some bytes of the answer (head or events); after a time; never.
          const point =
            r < 0.15
              ? { bytes: 0 }
              : r < 0.45
                ? { bytes: 1 + Math.floor(random() * 1_500) }
                : r < 0.9
                  ? { bytes: Infinity, ms: Math.floor(random() * 200) }
                  : { bytes: Infinity };
          return rawRequest(stack.edgeUrl, requests[kind](random), point.bytes, {
            timeoutMs: 20_000,
            ...(point.ms !== undefined ? { cutAfterMs: point.ms } : {}),
          });
        }),
      );
      cut += outcomes.filter((o) => !o.completed).length;
      answered += outcomes.filter((o) => o.completed && o.status === 200).length;
    }
    provider.set({ delayMs: undefined, chunkDelayMs: undefined });
    expect(cut, `seed ${seed}`).toBeGreaterThan(20);
    expect(answered, `seed ${seed}`).toBeGreaterThan(0);

    type Row = {
      id: string;
      status: string;
      error_code: string | null;
      final_units: string | null;
      output_tokens_cap: number;
      stream: boolean;
      usage_json: string | null;
    };
    const records = await eventually(
      () =>
        stack.sql<Row>(
          "managed-ai",
          "SELECT id, status, error_code, final_units::text, output_tokens_cap, stream, usage_json FROM usage_records WHERE tenant_id = $1",
          [c.tenantId],
        ),
      (rows) => rows.length > 0 && rows.every((r) => r.status !== "reserved"),
      30_000,
    );
    // Every provider call had a record, and no provider call was cut short.
    const calls = provider.requests.filter((r) => r.method === "POST").length;
    expect(records).toHaveLength(calls);
    expect(provider.abandoned).toEqual([]);

    // Exactly the cost of what the mock provider reports for each kind of request.
    const chatInput = BigInt(promptTokens(messages));
    const chatOutput = BigInt(countTokens(truncateToTokens(replyFor(messages), MAX_TOKENS).text));
    const embeddingInput = BigInt(texts.reduce((n, t) => n + embeddingTokens(t), 0));
    const chatCost = expectedCost(chatInput, chatOutput, model);
    const embeddingCost = expectedCost(embeddingInput, 0n, model);
    let charged = 0n;
    for (const r of records) {
      const embedding = r.output_tokens_cap === 0;
      expect(r, `seed ${seed}`).toMatchObject({ status: "completed", error_code: null, final_units: (embedding ? embeddingCost : chatCost).toString() });
      const usage = JSON.parse(r.usage_json!) as Record<string, number>;
      expect(usage.prompt_tokens).toBe(Number(embedding ? embeddingInput : chatInput));
      if (!embedding) expect(usage.completion_tokens).toBe(Number(chatOutput));
      charged += BigInt(r.final_units!);
    }
    expect(records.some((r) => r.stream) && records.some((r) => !r.stream && r.output_tokens_cap > 0) && records.some((r) => r.output_tokens_cap === 0)).toBe(
      true,
    );

    // The ledger: every hold captured at the record's charge (a record's end state is written
    // in parallel with its capture: docs/decisions/0164), the balance the credit less the charges.
    const audit = await settledBooks(stack, [c.tenantId], 30_000);
    expect(audit.problems).toEqual([]);
    expect(audit.waiting).toBe(0);
    expect(audit.captured).toBe(charged);
    await eventually(
      () => balance(stack, c),
      (b) => b.reserved_units === 0,
      5_000,
    );
    expect(await balance(stack, c)).toEqual({ available_units: CREDIT - Number(charged), reserved_units: 0 });

    for (const name of ["edge", "managed-ai", "ledger"] as const) {
      expect(stack.process(name).running, name).toBe(true);
      expect(
        stack.logs(name).filter((l) => l.level === "fatal" || /uncaught|unhandled/i.test(String(l.msg ?? l.raw ?? ""))),
        name,
      ).toEqual([]);
    }
  }, 240_000);

  it("settles a call whose client left while managed-ai shuts down gracefully: shutdown waits for it", async () => {
    provider.set({ chunkDelayMs: 60 });
    let stopped = false;
    try {
      // A stream of some 20 events, 60 ms apart: the client leaves after the first bytes.
      const cut = rawRequest(
        stack.edgeUrl,
        requests.stream(() => 0),
        700,
        { timeoutMs: 20_000 },
      );
      const outcome = await cut;
      expect(outcome.completed).toBe(false);
      const id = /x-request-id: (\S+)/i.exec(outcome.text)?.[1];
      expect(id, outcome.text).toBeTruthy();
      // The record is still being read from the provider when the stop begins.
      const [before] = await stack.sql<{ status: string }>("managed-ai", "SELECT status FROM usage_records WHERE id = $1", [id]);
      expect(before?.status).toBe("reserved");
      stopped = true;
      expect(await stack.stop("managed-ai", "SIGTERM")).toBe(0);
      const [after] = await stack.sql<{ status: string; final_units: string | null }>(
        "managed-ai",
        "SELECT status, final_units::text FROM usage_records WHERE id = $1",
        [id],
      );
      const chatCost = expectedCost(BigInt(promptTokens(messages)), BigInt(countTokens(truncateToTokens(replyFor(messages), MAX_TOKENS).text)), model);
      expect(after).toEqual({ status: "completed", final_units: chatCost.toString() });
      expect(provider.abandoned).toEqual([]);
    } finally {
      provider.set({ chunkDelayMs: undefined });
      if (stopped) await stack.start("managed-ai");
    }
  }, 60_000);
});
