import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { serveDuringTests } from "./local-server.test-support.js";
import { createLogger } from "@gateway/logger";
import { mountWidgetScript, widgetCors } from "./widget-script.js";

const logger = createLogger({ service: "edge-test", level: "silent" });
let dir: string;

const served = serveDuringTests(() => {
  dir = mkdtempSync(join(tmpdir(), "widget-script-"));
  writeFileSync(join(dir, "widget.js"), "(function(){})()");
  const app = express();
  app.use(widgetCors());
  mountWidgetScript(app, join(dir, "widget.js"), logger);
  app.post("/v1/apps/bot/widget/messages", (_req, res) => void res.status(401).json({ error: "unauthorized" }));
  app.post("/v1/apps/bot/widget/auth", (_req, res) => void res.status(401).json({ error: "unauthorized" }));
  app.use((_req, res) => void res.status(404).json({ error: "not_found" }));
  return app;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the chat widget's script and CORS", () => {
  it("serves /widget.js as a cross-origin script with a closed CSP", async () => {
    const res = await fetch(`${served.base}/widget.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/javascript; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(res.headers.get("cross-origin-resource-policy")).toBe("cross-origin");
    expect(res.headers.get("cache-control")).toBe("public, max-age=300");
    expect(await res.text()).toBe("(function(){})()");
  });

  it("answers preflights of the widget routes, and marks their answers (errors too) readable from any origin", async () => {
    const pre = await fetch(`${served.base}/v1/apps/bot/widget/messages`, {
      method: "OPTIONS",
      headers: { origin: "http://shop.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type");
    expect(pre.headers.get("access-control-allow-credentials")).toBeNull();
    const res = await fetch(`${served.base}/v1/apps/bot/widget/messages`, { method: "POST", headers: { origin: "http://shop.example" } });
    expect(res.status).toBe(401);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("gives no CORS to routes that take an API key, /widget/auth included", async () => {
    const pre = await fetch(`${served.base}/v1/apps/bot/widget/auth`, {
      method: "OPTIONS",
      headers: { origin: "http://shop.example", "access-control-request-method": "POST" },
    });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const auth = await fetch(`${served.base}/v1/apps/bot/widget/auth`, { method: "POST", headers: { origin: "http://shop.example" } });
    expect(auth.headers.get("access-control-allow-origin")).toBeNull();
    const other = await fetch(`${served.base}/v1/apps/bot/chats`, { headers: { origin: "http://shop.example" } });
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("is not mounted when the widget was not built", async () => {
    const app = express();
    mountWidgetScript(app, join(dir, "missing.js"), logger);
    app.use((_req, res) => void res.status(404).end());
    const s = createServer(app);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const a = s.address();
    const res = await fetch(`http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}/widget.js`);
    expect(res.status).toBe(404);
    await new Promise((r) => s.close(r));
  });
});
