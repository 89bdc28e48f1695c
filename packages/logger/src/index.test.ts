import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { coalescedStdout, createLogger, runWithContext } from "./index.js";

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

describe("coalescedStdout", () => {
  const file = () => join(mkdtempSync(join(tmpdir(), "gw-log-")), "out.log");
  const read = (path: string) => (existsSync(path) ? readFileSync(path, "utf8") : "");
  const until = async (check: () => boolean, ms = 2_000) => {
    const end = Date.now() + ms;
    while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    return check();
  };

  it("writes lines below warn together once the delay is over, in order", async () => {
    const path = file();
    const log = createLogger({ service: "edge", destination: coalescedStdout(150, path) });
    const started = Date.now();
    for (let i = 0; i < 20; i++) log.info({ i }, "request");
    await new Promise((r) => setTimeout(r, 60));
    expect(read(path)).toBe("");
    expect(await until(() => read(path).split("\n").filter(Boolean).length === 20)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(
      read(path)
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).i),
    ).toEqual([...Array(20).keys()]);
  });

  it("writes a warning at once, after the lines that wait before it", async () => {
    const path = file();
    const log = createLogger({ service: "edge", destination: coalescedStdout(5_000, path) });
    log.info("first");
    log.debug("not at this level");
    log.warn("then this");
    expect(await until(() => read(path).includes("then this"), 1_000)).toBe(true);
    expect(
      read(path)
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).msg),
    ).toEqual(["first", "then this"]);
  });
});
