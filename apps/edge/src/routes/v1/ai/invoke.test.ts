import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Response } from "express";
import { afterEach, describe, expect, it } from "vitest";
import type { managedAi } from "@gateway/protos";
import type { EdgeDeps } from "../../../deps.js";
import { relayStream } from "./invoke.js";

/*
 * docs/decisions/0310: a `batch` (the events of one read of the provider) is written
 * as one write, and the client gets the very bytes it gets when the same events come
 * one `data` message each.
 */

type Message = managedAi.InvokeStreamMessage__Output;
const start: Message = { kind: "start", start: { price_id: "price_1", reserved_units: "120" }, event: "" };
const data = (d: string): Message => ({ kind: "data", data: d, event: "" });
const batch = (...d: string[]): Message => ({ kind: "batch", batch: { data: d }, event: "" });

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Relays `messages` to a real HTTP client; the body it read and how many writes the response took. */
async function relay(messages: Message[]): Promise<{ body: string; writes: number; headers: Headers }> {
  let writes = 0;
  server = createServer((_req, res) => {
    const write = res.write.bind(res) as (chunk: unknown) => boolean;
    res.write = ((chunk: unknown) => {
      writes++;
      return write(chunk);
    }) as typeof res.write;
    async function* stream() {
      for (const m of messages) yield m;
    }
    const deps = { logger: { warn: () => undefined } } as unknown as EdgeDeps;
    void relayStream(deps, res as unknown as Response, Object.assign(stream(), { cancel: () => undefined }), new AbortController(), {
      priceVersion: true,
      event: (d) => `data: ${d}\n\n`,
      end: () => "",
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  return { body: await answer.text(), writes, headers: answer.headers };
}

describe("a stream relayed as server-sent events", () => {
  const events = ['{"n":1,"choices":[]}', '{"n":2,"s":"é😀\\n"}', '{"n":3}', '{"n":4,"usage":{"prompt_tokens":1}}'];

  it("writes a batch as one write, its events in order, the same bytes as one data message each", async () => {
    const one = await relay([start, ...events.map(data)]);
    const batched = await relay([start, data(events[0]!), batch(...events.slice(1))]);
    expect(one.body).toBe(`${events.map((e) => `data: ${e}\n\n`).join("")}data: [DONE]\n\n`);
    expect(batched.body).toBe(one.body);
    expect(batched.headers.get("x-service-price-version")).toBe("price_1");
    expect(one.writes).toBe(events.length);
    expect(batched.writes).toBe(2);
  });
});
