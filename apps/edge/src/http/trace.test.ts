import type { AddressInfo } from "node:net";
import express from "express";
import { spanContextOf, activeContext } from "@gateway/telemetry";
import { recordSpans } from "@gateway/telemetry/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { requestId } from "./request-id.js";

let recorder: Awaited<ReturnType<typeof recordSpans>>;
let url: string;
let close: () => void;
const seenInRoute: string[] = [];

beforeAll(async () => {
  recorder = await recordSpans("edge");
  const app = express();
  app.use(requestId());
  app.get("/things/:id", (_req, res) => {
    seenInRoute.push(spanContextOf(activeContext())?.spanId ?? "none");
    res.json({ ok: true });
  });
  app.get("/broken", (_req, res) => {
    res.status(503).json({ error: "unavailable" });
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});

afterAll(async () => {
  close();
  await recorder.stop();
});

it("one server span per request, named after the route, continuing the caller's traceparent", async () => {
  const res = await fetch(`${url}/things/thing_123?secret=abc`, {
    headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", authorization: "Bearer gw_secret" },
  });
  expect(res.status).toBe(200);
  await expect.poll(() => recorder.spans().length).toBe(1);
  const [span] = recorder.spans();
  expect(span!.name).toBe("GET /things/:id");
  expect(span!.spanContext().traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  expect(span!.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
  expect(span!.attributes).toMatchObject({ "http.request.method": "GET", "http.route": "/things/:id", "http.response.status_code": 200 });
  expect(span!.attributes["gateway.request_id"]).toBe(res.headers.get("x-request-id"));
  // The route ran inside the span (its gRPC calls become children of it).
  expect(seenInRoute).toEqual([span!.spanContext().spanId]);
  expect(JSON.stringify(span!.attributes)).not.toMatch(/secret|thing_123/);
});

it("a 5xx answer marks the span failed; a request without traceparent starts a trace", async () => {
  recorder.reset();
  expect((await fetch(`${url}/broken`)).status).toBe(503);
  await expect.poll(() => recorder.spans().length).toBe(1);
  const [span] = recorder.spans();
  expect(span!.parentSpanContext).toBeUndefined();
  expect(span!.status).toEqual({ code: 2, message: "503" });
});
