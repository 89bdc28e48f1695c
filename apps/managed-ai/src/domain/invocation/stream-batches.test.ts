import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderClient } from "../../providers/openai.js";
import { createTestContext, type TestContext } from "../../testing/context.js";
import { startTestLedger, type TestLedger } from "../../testing/ledger.js";
import { putInstance } from "../instances/put.js";
import { putModel } from "../models/put.js";
import { publishPrice } from "../prices/publish.js";
import { putUpstream } from "../upstreams/put.js";
import type { InvokeInput } from "./invoke.js";
import { invokeChatStream, type StreamMessage } from "./invoke-stream.js";
import type { ChatCall, ProviderResponse } from "./provider.js";

/*
 * docs/decisions/0310: the events that one read of the provider's stream delivered go
 * to a caller that asked for batches as one `batch` message, in order, each event as
 * `data` would have carried it; a single event still goes as `data`. The provider here
 * answers with fixed reads (each array element is what one read of its body returns);
 * PostgreSQL and the ledger are real, so the charge is the real one.
 */

const KEY = "sk-unit-batch-key";
const actor = "user:u1";
const TENANT = "ten_batches";
const PRICE = { input: 150_000_007n, output: 600_000_011n };

/**
 * A provider whose chat answers with the reads it is given, in order; `ended`: the body's
 * end has arrived with them (as when the provider's last bytes came in one read), else it is
 * still open after them.
 */
class ReadsProvider extends ProviderClient {
  reads: string[] = [];
  ended = true;
  body: Readable | undefined;
  override chat(_call: ChatCall): Promise<ProviderResponse> {
    const body = new Readable({ objectMode: true, read() {} });
    for (const r of this.reads) body.push(Buffer.from(r));
    if (this.ended) body.push(null);
    this.body = body;
    return Promise.resolve({ body: body as unknown as ProviderResponse["body"] });
  }
}

let t: TestContext;
let L: TestLedger;
const provider = new ReadsProvider({ headersMs: 5_000, idleMs: 5_000 }, { allowPrivate: true });

beforeAll(async () => {
  L = await startTestLedger();
  t = await createTestContext({ provider, ledgerCalls: L.calls });
  const ctx = t.ctx;
  await putUpstream({ ctx, input: { id: "mock", provider: "openai", base_url: "http://127.0.0.1:9", api_key: KEY, actor } });
  await putModel({ ctx, input: { alias: "small", upstream_id: "mock", upstream_model: "mock-small", actor } });
  await publishPrice({
    ctx,
    input: { model_alias: "small", input_units_per_mtok: PRICE.input.toString(), output_units_per_mtok: PRICE.output.toString(), actor },
  });
  await putInstance({ ctx, input: { actor, tenant_id: TENANT, alias: "chat", status: "active", mode: "managed", default_model: "small" } });
  await L.credit(TENANT, 10_000_000n);
}, 120_000);
afterAll(async () => {
  await t?.close();
  await L?.close();
});

let n = 0;
function input(): InvokeInput {
  return {
    requestId: `req_batch${++n}${Date.now()}`,
    tenantId: TENANT,
    apiKeyId: "key_1",
    alias: "chat",
    body: Buffer.from(JSON.stringify({ messages: [{ role: "user", content: "hi" }], max_tokens: 20, stream: true, stream_options: { include_usage: true } })),
    idempotencyKey: null,
    signal: new AbortController().signal,
  };
}

const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "mock-small", choices, ...extra })}\n\n`;
const delta = (content: string) => chunk([{ index: 0, delta: { content }, logprobs: null, finish_reason: null }]);
const USAGE = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
/** The events as the relay passes them on: `model` is the alias. */
const relayed = (sse: string) => sse.slice("data: ".length, -2).replace('"model":"mock-small"', '"model":"small"');

const role = chunk([{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]);
const finish = chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]);
const usage = chunk([], { usage: USAGE });
/** Reads as a provider's socket may deliver them: the first event alone, then several at once, one split across reads. */
const READS = [role, delta("Hel") + delta("lo ") + delta("th"), `${delta("ere").slice(0, 20)}`, `${delta("ere").slice(20)}${finish}${usage}data: [DONE]\n\n`];
const EVENTS = [role, delta("Hel"), delta("lo "), delta("th"), delta("ere"), finish, usage].map(relayed);

async function run(batches: boolean, reads: string[]) {
  provider.reads = reads;
  const sent: StreamMessage[] = [];
  const req = input();
  await invokeChatStream({ ctx: t.ctx, input: req, send: async (m) => void sent.push(m), batches });
  const [record] = await t.ctx.sql.query<{ status: string; error_code: string | null; final_units: string | null }>(
    "SELECT status, error_code, final_units::text FROM usage_records WHERE id = $1",
    [req.requestId],
  );
  const events = sent.flatMap((m) => ("data" in m ? [m.data] : "batch" in m ? m.batch : []));
  return { sent, record, events };
}

const expectedCharge = ((9n * PRICE.input + 4n * PRICE.output + 999_999n) / 1_000_000n).toString();

describe("a stream's events for a caller that reads batches", () => {
  it("go as one batch per read of the provider (a single event as data), in order and as they would go one by one", async () => {
    const { sent, record, events } = await run(true, READS);
    expect(sent.map((m) => Object.keys(m)[0])).toEqual(["start", "data", "batch", "batch"]);
    expect(sent[2]).toEqual({ batch: EVENTS.slice(1, 4) });
    expect(sent[3]).toEqual({ batch: EVENTS.slice(4) });
    expect(events).toEqual(EVENTS);
    expect(record).toEqual({ status: "completed", error_code: null, final_units: expectedCharge });
  });

  it("go one data message each for a caller that did not ask (an older edge), with the same events and charge", async () => {
    const { sent, record, events } = await run(false, READS);
    expect(sent.map((m) => Object.keys(m)[0])).toEqual(["start", ...EVENTS.map(() => "data")]);
    expect(events).toEqual(EVENTS);
    expect(record).toEqual({ status: "completed", error_code: null, final_units: expectedCharge });
  });

  it("pass on the events of a read before a malformed one, then the failure", async () => {
    const { sent, record } = await run(true, [role, `${delta("a")}${delta("b")}data: {not json\n\n${delta("c")}`]);
    expect(sent.map((m) => Object.keys(m)[0])).toEqual(["start", "data", "batch", "failure"]);
    expect(sent[2]).toEqual({ batch: [relayed(delta("a")), relayed(delta("b"))] });
    expect(sent[3]).toMatchObject({ failure: { errorCode: "provider_malformed_response" } });
    expect(record).toMatchObject({ status: "review", error_code: "provider_malformed_response" });
  });

  it("leave a body whose end arrived with [DONE] to end by itself, and destroy one still open, as before (0311)", async () => {
    provider.ended = true;
    await run(true, READS);
    const ended = provider.body!;
    await new Promise<void>((resolve) => (ended.closed ? resolve() : ended.once("close", () => resolve())));
    expect(ended.readableEnded).toBe(true);
    expect(ended.errored).toBeNull();

    provider.ended = false;
    const { record } = await run(true, READS);
    expect(provider.body!.destroyed).toBe(true);
    expect(record).toEqual({ status: "completed", error_code: null, final_units: expectedCharge });
    provider.ended = true;
  });
});
