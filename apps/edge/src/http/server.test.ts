import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAppServer } from "./server.js";

const app = express();
app.post("/echo", express.json(), (req, res) => {
  res.status(201).json({ got: req.body as unknown, path: req.path, header: req.get("x-test") ?? null });
});
const server = createAppServer(app, { keepAliveTimeout: 1_000 });
// Before express sees them (it would set both prototypes itself).
const seen: { requestProto: boolean; responseProto: boolean }[] = [];
server.prependListener("request", (req, res) => {
  seen.push({ requestProto: Object.getPrototypeOf(req) === app.request, responseProto: Object.getPrototypeOf(res) === app.response });
});
let base = "";
beforeAll(
  () =>
    new Promise<void>((resolve) =>
      server.listen(0, "127.0.0.1", () => {
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        resolve();
      }),
    ),
);
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("createAppServer", () => {
  it("serves the app with requests and responses born with its prototypes", async () => {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/echo?x=1`, { method: "POST", headers: { "content-type": "application/json", "x-test": "yes" }, body: '{"a":1}' });
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ got: { a: 1 }, path: "/echo", header: "yes" });
    }
    const missing = await fetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
    expect(seen).toHaveLength(3);
    expect(seen.every((s) => s.requestProto && s.responseProto)).toBe(true);
  });
});
