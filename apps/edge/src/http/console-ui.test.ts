import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { serveDuringTests } from "./local-server.test-support.js";
import { createLogger } from "@gateway/logger";
import { mountConsoleUi } from "./console-ui.js";

const logger = createLogger({ service: "edge-test", level: "silent" });
let dir: string;

const served = serveDuringTests(() => {
  dir = mkdtempSync(join(tmpdir(), "console-ui-"));
  mkdirSync(join(dir, "assets"));
  writeFileSync(join(dir, "index.html"), '<div id="root"></div>');
  writeFileSync(join(dir, "assets", "index-abc123.js"), "console.log(1)");
  const app = express();
  mountConsoleUi(app, dir, logger);
  app.use((_req, res) => void res.status(404).json({ error: "not_found" }));
  return app;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the web console's static files", () => {
  it("serves index.html under /app/, never cached, with a strict CSP", async () => {
    const res = await fetch(`${served.base}/app/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('id="root"');
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("content-security-policy")).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("caches hashed assets for good", async () => {
    const res = await fetch(`${served.base}/app/assets/index-abc123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  });

  it("redirects /app to /app/ once, and leaves unknown paths and other routes to the API's 404", async () => {
    const res = await fetch(`${served.base}/app`, { redirect: "manual" });
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe("/app/");
    expect((await fetch(`${served.base}/app/missing.js`)).status).toBe(404);
    expect((await fetch(`${served.base}/app/../../etc/passwd`)).status).toBe(404);
    expect((await fetch(`${served.base}/apps`)).status).toBe(404);
  });

  it("is not mounted when the console was not built", () => {
    const app = express();
    const empty = mkdtempSync(join(tmpdir(), "console-ui-empty-"));
    try {
      mountConsoleUi(app, empty, logger);
      expect((app as unknown as { router: { stack: unknown[] } }).router?.stack?.length ?? 0).toBe(0);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
