import express, { type RequestHandler } from "express";
import { describe, expect, it } from "vitest";
import { serveDuringTests } from "./local-server.test-support.js";
import { AppError } from "@gateway/errors";
import { leanPath, pathPattern } from "./hot-path.js";
import type { AnyRoute } from "./route.js";

const route = (path: string, hot: boolean, method: AnyRoute<unknown>["method"] = "post"): AnyRoute<unknown> => ({
  method,
  path,
  summary: path,
  tags: [],
  access: { kind: "public" },
  responses: {},
  ...(hot ? { hot: true as const } : {}),
  handler: () => Promise.resolve({ status: 200 }),
});

describe("pathPattern", () => {
  it("matches as express does: case-insensitive, an optional trailing slash, one segment per parameter", () => {
    const { pattern, names } = pathPattern("/v1/apps/ai/:alias/v1/chat/completions");
    expect(names).toEqual(["alias"]);
    expect(pattern.exec("/v1/apps/ai/bench/v1/chat/completions")?.[1]).toBe("bench");
    expect(pattern.test("/V1/Apps/AI/bench/v1/chat/completions/")).toBe(true);
    expect(pattern.test("/v1/apps/ai//v1/chat/completions")).toBe(false);
    expect(pattern.test("/v1/apps/ai/a/b/v1/chat/completions")).toBe(false);
    expect(pattern.test("/v1/apps/ai/bench/v1/chat/completions/x")).toBe(false);
  });

  it("refuses what it does not match as express would", () => {
    expect(() => pathPattern("/v1/files/*rest")).toThrow(/lean path/);
  });
});

describe("leanPath", () => {
  const ran: string[] = [];
  const convention =
    (name: string): RequestHandler =>
    (_req, _res, next) => {
      ran.push(name);
      next();
    };
  const hot = route("/v1/apps/ai/:alias/chat", true);
  const cold = route("/v1/keys/:id", false);
  const handlers: Record<string, RequestHandler> = {
    [hot.path]: (req, res, next) => {
      ran.push("handler");
      if (req.params.alias === "fail") return next(new AppError("forbidden", "no"));
      res.json({ alias: req.params.alias, route: (req.route as { path: string }).path, body: req.body as unknown });
    },
  };
  const app = express();
  const errors = (err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    ran.push("errors");
    res.status(err instanceof AppError ? err.httpStatus : 400).json({ error: err instanceof AppError ? err.code : "invalid_request" });
  };
  app.use(
    leanPath({
      routes: [cold, hot],
      conventions: [convention("a"), convention("b"), express.json()],
      handlerOf: (r) => handlers[r.path]!,
      errorHandler: errors,
    }),
  );
  app.use(convention("router"));
  app.post("/v1/keys/:id", (_req, res) => void res.json({ cold: true }));
  app.use(errors);
  const served = serveDuringTests(() => app);
  const post = (path: string, body: string) => fetch(`${served.base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });

  it("runs the conventions and the handler of a hot route, not the router", async () => {
    ran.length = 0;
    const res = await post("/V1/apps/ai/my%20model/chat/?x=1", '{"a":1}');
    expect(await res.json()).toEqual({ alias: "my model", route: "/v1/apps/ai/:alias/chat", body: { a: 1 } });
    expect(ran).toEqual(["a", "b", "handler"]);
  });

  it("sends a handler's error and a body that does not parse to the error handler", async () => {
    ran.length = 0;
    expect((await post("/v1/apps/ai/fail/chat", "{}")).status).toBe(403);
    expect(ran).toEqual(["a", "b", "handler", "errors"]);
    ran.length = 0;
    expect((await post("/v1/apps/ai/m/chat", "{")).status).toBe(400);
    expect(ran).toEqual(["a", "b", "errors"]);
    expect((await post("/v1/apps/ai/%E0%A4%A/chat", "{}")).status).toBe(400);
  });

  it("leaves every other request to the router", async () => {
    ran.length = 0;
    expect(await (await post("/v1/keys/k1", "{}")).json()).toEqual({ cold: true });
    expect(ran).toEqual(["router"]);
    ran.length = 0;
    expect((await fetch(`${served.base}/v1/apps/ai/m/chat`)).status).toBe(404);
    expect(ran).toEqual(["router"]);
  });

  it("refuses a hot route that a route declared before it would answer", () => {
    const shadow = route("/v1/apps/ai/:alias/:action", false);
    expect(() => leanPath({ routes: [shadow, hot], conventions: [], handlerOf: () => (_q, _s, n) => n(), errorHandler: errors })).toThrow(/declared earlier/);
    expect(() =>
      leanPath({
        routes: [route("/v1/apps/ai/:alias/:action", false, "get"), hot],
        conventions: [],
        handlerOf: () => (_q, _s, n) => n(),
        errorHandler: errors,
      }),
    ).not.toThrow();
  });
});

describe("pathPattern against express's own router", () => {
  const paths = ["/v1/apps/ai/:alias/v1/chat/completions", "/v1/apps/ai/:alias/chat/stream", "/v1/apps/ai/:alias/embeddings"];
  const app = express();
  for (const path of paths) app.post(path, (req, res) => void res.json({ path, alias: req.params.alias }));
  app.use((_req, res) => void res.status(404).json({}));
  const served = serveDuringTests(() => app);

  it("matches exactly the URLs the router matches, with the same parameter", async () => {
    const urls = [
      "/v1/apps/ai/bench/v1/chat/completions",
      "/v1/apps/ai/bench/v1/chat/completions/",
      "/v1/apps/ai/bench/v1/chat/completions//",
      "/V1/APPS/AI/Bench/V1/Chat/Completions",
      "/v1/apps/ai/a.b-c_d/v1/chat/completions",
      "/v1/apps/ai/a%2Fb/v1/chat/completions",
      "/v1/apps/ai/a%20b/v1/chat/completions",
      "/v1/apps/ai//v1/chat/completions",
      "/v1/apps/ai/a/b/v1/chat/completions",
      "//v1/apps/ai/bench/v1/chat/completions",
      "/v1/apps/ai/bench/v1/chat/completionsx",
      "/v1/apps/ai/bench/chat/stream",
      "/v1/apps/ai/bench/chat/stream/x",
      "/v1/apps/ai/bench/embeddings",
      "/v1/apps/ai/bench/embeddings.json",
      "/v1/apps/ai/:alias/embeddings",
    ];
    for (const url of urls) {
      const res = await fetch(`${served.base}${url}`, { method: "POST" });
      const viaRouter = res.status === 200 ? ((await res.json()) as { path: string; alias: string }) : null;
      let viaPattern: { path: string; alias: string } | null = null;
      for (const path of paths) {
        const m = pathPattern(path).pattern.exec(url);
        if (m) {
          viaPattern = { path, alias: decodeURIComponent(m[1]!) };
          break;
        }
      }
      expect(viaPattern, url).toEqual(viaRouter);
    }
  });
});
