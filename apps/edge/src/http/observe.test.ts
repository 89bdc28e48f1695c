import { Writable } from "node:stream";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@gateway/logger";
import { Registry } from "@gateway/metrics";
import { loggedPath, observe } from "./observe.js";

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});
const app = express();
app.use(observe(new Registry(), createLogger({ service: "edge-test", destination: sink })));
app.get("/v1/apps/file/download/:token", (_req, res) => void res.status(404).json({ error: "not_found" }));
app.get("/v1/jobs/:id", (_req, res) => void res.json({}));
let server: ReturnType<typeof app.listen>;
let base = "";

beforeAll(async () => {
  server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe("the access log", () => {
  it("never writes a download or share token, and keeps other paths as they are", async () => {
    const token = "ftok_S3cr3tBearerValue-0123456789";
    await fetch(`${base}/v1/apps/file/download/${token}?x=1`);
    await fetch(`${base}/v1/jobs/job_123`);
    await new Promise((r) => setTimeout(r, 50));
    const paths = lines.filter((l) => l.msg === "request").map((l) => l.path);
    expect(paths).toEqual(["/v1/apps/file/download/[redacted]", "/v1/jobs/job_123"]);
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it("redacts an escaped token as well", () => {
    expect(loggedPath({ path: "/v1/apps/file/share/a%20b", params: { token: "a b" } })).toBe("/v1/apps/file/share/[redacted]");
    expect(loggedPath({ path: "/v1/x/%E0%A4%A", params: { token: "zz" } })).toBe("/v1/x/%E0%A4%A");
  });
});
