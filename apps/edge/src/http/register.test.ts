import express from "express";
import { describe, expect, it } from "vitest";
import { serveDuringTests } from "./local-server.test-support.js";
import { z } from "zod";
import { idempotencyKeyHeader, type IdempotencyKeyHeader } from "@gateway/contract";
import { AppError } from "@gateway/errors";
import type { Authenticators } from "./access.js";
import { buildOpenApi } from "./openapi.js";
import { routeHandler } from "./register.js";
import { type AnyRoute, defineRoute } from "./route.js";

const Headers = idempotencyKeyHeader("a repeat is answered once");
const echo = defineRoute<unknown, Record<string, never>, Record<string, never>, { n: number }, IdempotencyKeyHeader>({
  method: "post",
  path: "/things",
  summary: "echoes its declared headers",
  tags: [],
  access: { kind: "public" },
  body: z.strictObject({ n: z.number() }),
  headers: Headers,
  responses: { 200: { description: "the headers" } },
  handler: ({ headers }) => Promise.resolve({ status: 200, body: { headers } }),
});

describe("declared request headers", () => {
  const app = express();
  app.use(express.json());
  app.post("/things", routeHandler(echo as AnyRoute<unknown>, { deps: {}, auth: {} as Authenticators }));
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const e = err instanceof AppError ? err : new AppError("internal_error", "internal error");
    res.status(e.httpStatus).json({ error: e.code, message: e.message });
  });
  const served = serveDuringTests(() => app);
  const post = (headers: Record<string, string>, body: unknown = { n: 1 }) =>
    fetch(`${served.base}/things`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

  it("hands the handler the declared headers by their canonical names, whatever the case sent", async () => {
    const res = await post({ "idempotency-key": "k:1" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ headers: { "Idempotency-Key": "k:1" } });
    expect(await (await post({})).json()).toEqual({ headers: {} });
  });

  it("answers a header outside its schema with 400 invalid_request naming it, before the handler", async () => {
    for (const bad of ["bad key!", "", "x".repeat(129)]) {
      const res = await post({ "Idempotency-Key": bad });
      expect(res.status, bad).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_request", message: "header Idempotency-Key: must be 1-128 of A-Z a-z 0-9 . _ : -" });
    }
  });

  it("checks the body first (its 400 as before)", async () => {
    const res = await post({ "Idempotency-Key": "bad key!" }, { n: "x" });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/^body n:/);
  });
});

describe("the OpenAPI document", () => {
  it("documents declared headers as header parameters, with their schema", () => {
    const doc = buildOpenApi([echo as AnyRoute<unknown>]) as { paths: Record<string, Record<string, { parameters: unknown[] }>> };
    expect(doc.paths["/things"]!.post!.parameters).toEqual([
      {
        name: "Idempotency-Key",
        in: "header",
        required: false,
        description: "a repeat is answered once",
        schema: { type: "string", pattern: "^[A-Za-z0-9._:-]{1,128}$" },
      },
    ]);
  });
});
