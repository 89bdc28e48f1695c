import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonBody } from "./json-body.js";

const app = express();
app.post("/", jsonBody(1024), (req, res) => {
  res.json({ body: (req.body as unknown) ?? null, raw: req.rawBody?.toString() ?? null });
});
app.use((err: { status?: number; type?: string }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
  res.status(err.status ?? 500).json({ type: err.type ?? null });
});
let base = "";
let server: ReturnType<typeof app.listen>;
beforeAll(
  () =>
    new Promise<void>((resolve) => {
      server = app.listen(0, "127.0.0.1", () => {
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        resolve();
      });
    }),
);
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const post = async (contentType: string, body: string) => {
  const res = await fetch(base, { method: "POST", headers: { "content-type": contentType }, body });
  return { status: res.status, json: (await res.json()) as unknown };
};

describe("jsonBody", () => {
  it("reads JSON and +json types, whatever their case and parameters, keeping the bytes as sent", async () => {
    for (const type of ["application/json", "Application/JSON", "application/json; charset=utf-8", "application/vnd.api+json"]) {
      expect(await post(type, '{ "a": 1 }'), type).toEqual({ status: 200, json: { body: { a: 1 }, raw: '{ "a": 1 }' } });
    }
  });

  it("leaves other types unread, and refuses what is not JSON or not UTF", async () => {
    expect(await post("text/plain", '{"a":1}')).toEqual({ status: 200, json: { body: null, raw: null } });
    expect(await post("application/jsonx", '{"a":1}')).toEqual({ status: 200, json: { body: null, raw: null } });
    expect((await post("application/json", "{nope")).json).toEqual({ type: "entity.parse.failed" });
    expect((await post("application/json", "1")).json).toEqual({ type: "entity.parse.failed" });
    expect((await post("application/json; charset=latin1", '{"a":1}')).json).toEqual({ type: "charset.unsupported" });
    expect((await post("application/json", `{"a":"${"x".repeat(2000)}"}`)).json).toEqual({ type: "entity.too.large" });
  });
});
