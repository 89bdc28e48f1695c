import { Writable } from "node:stream";
import express from "express";
import { describe, expect, it } from "vitest";
import { serveDuringTests } from "./local-server.test-support.js";
import { AppError } from "@gateway/errors";
import { createLogger } from "@gateway/logger";
import { Registry } from "@gateway/metrics";
import { errorHandler } from "./errors.js";
import { observe, pathRedactor } from "./observe.js";

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});
const logger = createLogger({ service: "edge-test", destination: sink });
const patterns = ["/v1/apps/file/download/:token", "/v1/apps/file/share/:token", "/v1/jobs/:id"];
const redact = pathRedactor(patterns);
const app = express();
app.use(observe(new Registry(), logger, redact));
app.get("/v1/apps/file/download/:token", (_req, res) => void res.status(404).json({ error: "not_found" }));
// As the edge's routes do when the files service fails: the error goes on to the error handler.
app.get("/v1/apps/file/share/:token", (_req, _res, next) => next(new AppError("unavailable", "The files service is unavailable.")));
app.get("/v1/jobs/:id", (_req, res) => void res.json({}));
app.use(errorHandler(logger, redact));
const served = serveDuringTests(() => app);

async function logged(): Promise<Record<string, unknown>[]> {
  await new Promise((r) => setTimeout(r, 50));
  return lines.splice(0);
}

describe("the access log", () => {
  it("never writes a download or share token, and keeps other paths as they are", async () => {
    const token = "ftok_S3cr3tBearerValue-0123456789";
    await fetch(`${served.base}/v1/apps/file/download/${token}?x=1`);
    await fetch(`${served.base}/v1/jobs/job_123`);
    const out = await logged();
    expect(out.filter((l) => l.msg === "request").map((l) => l.path)).toEqual(["/v1/apps/file/download/[redacted]", "/v1/jobs/job_123"]);
    expect(JSON.stringify(out)).not.toContain(token);
  });

  it("never writes the token when the route answers with an error (5xx), in the access line or the error line", async () => {
    const token = "ftok_AnotherS3cretValue-9876543210";
    const res = await fetch(`${served.base}/v1/apps/file/share/${token}`);
    expect(res.status).toBe(503);
    const out = await logged();
    expect(out.find((l) => l.msg === "request")).toMatchObject({ path: "/v1/apps/file/share/[redacted]", status: 503 });
    expect(out.find((l) => l.msg === "request failed")).toMatchObject({ path: "/v1/apps/file/share/[redacted]" });
    expect(JSON.stringify(out)).not.toContain(token);
  });

  it("redacts by the route pattern: any case, a trailing slash, escapes; other paths as sent", () => {
    expect(redact("/v1/apps/file/share/a%20b")).toBe("/v1/apps/file/share/[redacted]");
    expect(redact("/V1/Apps/File/Download/tok/")).toBe("/V1/Apps/File/Download/[redacted]");
    expect(redact("/v1/apps/file/download/")).toBe("/v1/apps/file/download/");
    expect(redact("/v1/apps/file/download/a/b")).toBe("/v1/apps/file/download/a/b");
    expect(redact("/v1/x/%E0%A4%A")).toBe("/v1/x/%E0%A4%A");
    expect(redact("/v1/jobs/job_1")).toBe("/v1/jobs/job_1");
  });
});
