import { describe, expect, it } from "vitest";
import { EMBEDDING_DIMENSIONS, embeddingOf, promptTokens, startMockProvider } from "./index.js";
import { providerPerFile, TEST_KEY } from "./testing/provider-per-file.js";

const KEY = TEST_KEY;
const provider = providerPerFile();

const auth = (key = KEY) => ({ authorization: `Bearer ${key}` });
const chat = (body: unknown, key = KEY) =>
  fetch(`${provider.url}/chat/completions`, { method: "POST", headers: { ...auth(key), "content-type": "application/json" }, body: JSON.stringify(body) });

/** A JSON body, untyped (tests look into it). */
const json = async (res: Response): Promise<any> => res.json();

/** The `data:` payloads of an SSE body, in order. */
async function events(res: Response): Promise<string[]> {
  const text = await res.text();
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      expect(block.startsWith("data: ")).toBe(true);
      return block.slice("data: ".length);
    });
}

const messages = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Hello there" },
];

describe("models listing", () => {
  it("lists models for the right key; 401 in OpenAI's shape otherwise", async () => {
    expect(provider.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const ok = await fetch(`${provider.url}/models`, { headers: auth() });
    expect(ok.status).toBe(200);
    expect(await json(ok)).toEqual({
      object: "list",
      data: [
        { id: "mock-small", object: "model", created: 0, owned_by: "mock-provider" },
        { id: "mock-large", object: "model", created: 0, owned_by: "mock-provider" },
      ],
    });
    for (const headers of [auth("sk-wrong"), {}]) {
      const denied = await fetch(`${provider.url}/models`, { headers });
      expect(denied.status).toBe(401);
      expect(await json(denied)).toEqual({
        error: { message: "Incorrect API key provided.", type: "invalid_request_error", param: null, code: "invalid_api_key" },
      });
    }
  });

  it("records every request: method, path, headers and parsed body", async () => {
    await fetch(`${provider.url}/models`, { headers: auth("sk-wrong") });
    await chat({ model: "mock-small", messages });
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[0]).toMatchObject({ method: "GET", path: "/v1/models", body: undefined });
    expect(provider.requests[0]!.headers.authorization).toBe("Bearer sk-wrong");
    expect(provider.requests[1]).toMatchObject({ method: "POST", path: "/v1/chat/completions", body: { model: "mock-small", messages } });
  });
});

describe("chat completions", () => {
  it("answers deterministically with the documented usage", async () => {
    const res = await chat({ model: "mock-small", messages });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "mock-small",
      choices: [{ index: 0, message: { role: "assistant", content: "Mock reply to: Hello there" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 14, completion_tokens: 7, total_tokens: 21 },
    });
    expect(body.usage.prompt_tokens).toBe(promptTokens(messages));
    expect(body.id).toMatch(/^chatcmpl-mock-\d+$/);
  });

  it("never reports more completion tokens than max_tokens", async () => {
    const body = await json(await chat({ model: "m", messages, max_tokens: 3 }));
    expect(body.choices[0]).toMatchObject({ message: { content: "Mock reply t" }, finish_reason: "length" });
    expect(body.usage.completion_tokens).toBe(3);
    const newer = await json(await chat({ model: "m", messages, max_completion_tokens: 2 }));
    expect(newer.usage.completion_tokens).toBe(2);
  });

  it("ends a reply before the first stop sequence it contains and names it (vLLM's stop_reason), JSON and streamed", async () => {
    const body = await json(await chat({ model: "m", messages, stop: ["there", "reply"] }));
    expect(body.choices[0]).toMatchObject({ message: { content: "Mock " }, finish_reason: "stop", stop_reason: "reply" });
    expect(body.usage.completion_tokens).toBe(2);
    const plain = await json(await chat({ model: "m", messages, stop: "absent" }));
    expect(plain.choices[0].message.content).toBe("Mock reply to: Hello there");
    expect(plain.choices[0]).not.toHaveProperty("stop_reason");
    const chunks = (await events(await chat({ model: "m", messages, stop: ["to:"], stream: true }))).slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("Mock reply ");
    expect(chunks.at(-1).choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: "to:" });
    expect((await chat({ model: "m", messages, stop: ["a", "b", "c", "d", "e"] })).status).toBe(400);
  });

  it("rejects what OpenAI rejects, in its error shape", async () => {
    for (const body of [{ model: "m", messages: [] }, { messages }, { model: "m", messages, max_tokens: 0 }, "not json"]) {
      const res = await chat(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await json(res)).error.type).toBe("invalid_request_error");
    }
    expect((await chat({ model: "m", messages }, "sk-wrong")).status).toBe(401);
    const unknown = await fetch(`${provider.url}/completions`, { method: "POST", headers: auth() });
    expect(unknown.status).toBe(404);
  });

  it("streams server-sent events: role, words, finish, usage when asked, then [DONE]", async () => {
    const res = await chat({ model: "mock-small", messages, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const data = await events(res);
    expect(data.at(-1)).toBe("[DONE]");
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.id === chunks[0].id)).toBe(true);
    expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("")).toBe("Mock reply to: Hello there");
    expect(chunks.at(-2).choices[0].finish_reason).toBe("stop");
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 14, completion_tokens: 7, total_tokens: 21 } });

    const plain = (await events(await chat({ model: "m", messages, stream: true }))).slice(0, -1).map((d) => JSON.parse(d));
    expect(plain.some((c) => c.usage)).toBe(false);
  });
});

describe("embeddings", () => {
  const embed = (body: unknown) =>
    fetch(`${provider.url}/embeddings`, { method: "POST", headers: { ...auth(), "content-type": "application/json" }, body: JSON.stringify(body) });

  it("answers deterministic vectors in input order with token usage", async () => {
    const body = await json(await embed({ model: "mock-embed", input: ["alpha", "beta gamma"] }));
    expect(body).toMatchObject({ object: "list", model: "mock-embed", usage: { prompt_tokens: 2 + 3, total_tokens: 5 } });
    expect(body.data.map((d: { index: number }) => d.index)).toEqual([0, 1]);
    expect(body.data[0].embedding).toEqual(embeddingOf("alpha"));
    expect(body.data[0].embedding).toHaveLength(EMBEDDING_DIMENSIONS);
    expect(body.data[0].embedding).not.toEqual(body.data[1].embedding);
    const again = await json(await embed({ model: "mock-embed", input: "alpha" }));
    expect(again.data[0].embedding).toEqual(body.data[0].embedding);
    expect(again.usage.prompt_tokens).toBe(2);
  });

  it("answers float32 base64 when asked, as OpenAI does", async () => {
    const body = await json(await embed({ model: "m", input: "alpha", encoding_format: "base64" }));
    const bytes = Buffer.from(body.data[0].embedding, "base64");
    const floats = [...new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)];
    expect(floats.map((f) => Math.round(f * 1e4))).toEqual(embeddingOf("alpha").map((f) => Math.round(f * 1e4)));
  });

  it("rejects what OpenAI rejects", async () => {
    for (const body of [{ model: "m" }, { input: "x" }, { model: "m", input: [] }, { model: "m", input: "" }, { model: "m", input: "x", dimensions: 0 }]) {
      expect((await embed(body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("behaviour", () => {
  it("fails with a chosen status", async () => {
    provider.set({ failStatus: 503 });
    const res = await fetch(`${provider.url}/models`, { headers: auth() });
    expect(res.status).toBe(503);
    expect((await json(res)).error).toMatchObject({ type: "server_error", code: "mock_failure" });
    provider.set({ failStatus: undefined });
    expect((await fetch(`${provider.url}/models`, { headers: auth() })).status).toBe(200);
  });

  it("delays its answer", async () => {
    provider.set({ delayMs: 300 });
    const started = Date.now();
    expect((await fetch(`${provider.url}/models`, { headers: auth() })).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it("drops the connection before answering, or in the middle of a stream", async () => {
    provider.set({ drop: "before-response" });
    await expect(fetch(`${provider.url}/models`, { headers: auth() })).rejects.toThrow();
    provider.set({ drop: "mid-stream" });
    const res = await chat({ model: "m", messages, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it("omits the usage chunk of streams, or reports chosen usage", async () => {
    provider.set({ omitUsage: true });
    const data = await events(await chat({ model: "m", messages, stream: true, stream_options: { include_usage: true } }));
    expect(data.at(-1)).toBe("[DONE]");
    expect(data.slice(0, -1).some((d) => JSON.parse(d).usage)).toBe(false);
    provider.set({ omitUsage: undefined, usage: { completion_tokens: 5000 } });
    const body = await json(await chat({ model: "m", messages }));
    expect(body.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 5000, total_tokens: 5014 });
  });
});

describe("slow streams", () => {
  it("wait between chunks and notice a client that leaves", async () => {
    const provider = await startMockProvider({ apiKey: "k" });
    try {
      provider.set({ chunkDelayMs: 50 });
      const controller = new AbortController();
      const res = await fetch(`${provider.url}/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer k", "content-type": "application/json" },
        body: JSON.stringify({ model: "mock-small", stream: true, messages: [{ role: "user", content: "one two three four five six" }] }),
        signal: controller.signal,
      });
      const reader = res.body!.getReader();
      const started = Date.now();
      await reader.read();
      await reader.read();
      controller.abort();
      await new Promise((r) => setTimeout(r, 200));
      expect(provider.abandoned).toEqual(["/v1/chat/completions"]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    } finally {
      await provider.close();
    }
  });
});
