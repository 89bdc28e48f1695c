import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startStack, type Stack } from "@gateway/testkit";

// No files service in this stack: every files route fails after routing (503),
// which is when the router has already reset req.params.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ services: [] });
});
afterAll(async () => stack?.shutdown());

describe("the access log", () => {
  it("never writes a download or share token when the files service fails (5xx)", async () => {
    const token = `ftok_${randomBytes(24).toString("base64url")}`;
    for (const path of [`/v1/apps/file/download/${token}`, `/v1/apps/file/share/${token}`]) {
      const res = await call(stack.edgeUrl, "GET", path);
      expect(res.status, path).toBeGreaterThanOrEqual(500);
      expect(res.body).toMatchObject({ error: expect.any(String), request_id: res.headers.get("x-request-id") });
    }
    const head = await fetch(`${stack.edgeUrl}/v1/apps/file/download/${token}`, { method: "HEAD" });
    expect(head.status).toBeGreaterThanOrEqual(500);

    const access = await stack.waitForLog(
      "edge",
      (l) => l.msg === "request" && l.method === "HEAD" && typeof l.path === "string" && l.path.startsWith("/v1/apps/file/download/"),
    );
    expect(access.path).toBe("/v1/apps/file/download/[redacted]");
    const lines = stack.logs("edge").filter((l) => typeof l.path === "string" && l.path.startsWith("/v1/apps/file/"));
    expect(lines.filter((l) => l.msg === "request").map((l) => [l.method, l.path, l.status])).toEqual([
      ["GET", "/v1/apps/file/download/[redacted]", expect.any(Number)],
      ["GET", "/v1/apps/file/share/[redacted]", expect.any(Number)],
      ["HEAD", "/v1/apps/file/download/[redacted]", expect.any(Number)],
    ]);
    expect(lines.some((l) => l.msg === "request failed")).toBe(true);
    expect(JSON.stringify(stack.logs("edge"))).not.toContain(token);
  });
});
