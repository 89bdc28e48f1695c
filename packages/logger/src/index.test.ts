import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger, runWithContext } from "./index.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { lines, destination };
}

describe("createLogger", () => {
  it("writes JSON with service, level name and ISO time", () => {
    const { lines, destination } = capture();
    createLogger({ service: "ledger", destination }).info({ units: 5 }, "credited");
    expect(lines[0]).toMatchObject({ service: "ledger", level: "info", msg: "credited", units: 5 });
    expect(String(lines[0]?.time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("adds the request id inside a request context, also in child loggers", async () => {
    const { lines, destination } = capture();
    const log = createLogger({ service: "edge", destination });
    await runWithContext({ requestId: "req_abc" }, async () => {
      await Promise.resolve();
      log.child({ component: "router" }).info("inside");
    });
    log.info("outside");
    expect(lines[0]).toMatchObject({ request_id: "req_abc", component: "router" });
    expect(lines[1]).not.toHaveProperty("request_id");
  });

  it("redacts secrets at the top level and nested", () => {
    const { lines, destination } = capture();
    const log = createLogger({ service: "edge", destination });
    log.info(
      {
        password: "hunter2hunter2",
        body: { api_key: "sk-live-123", name: "ok" },
        req: { headers: { authorization: "Bearer abc", "x-api-key": "gw_secret" } },
      },
      "request",
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ["hunter2hunter2", "sk-live-123", "Bearer abc", "gw_secret"]) expect(text).not.toContain(secret);
    expect(lines[0]).toMatchObject({ password: "[redacted]", body: { api_key: "[redacted]", name: "ok" } });
  });
});
