import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";

const bin = new URL("../dist/bin.js", import.meta.url).pathname;

describe("gateway-mock-provider", () => {
  it("serves on the given options, prints its base URL, and stops on SIGTERM", async () => {
    expect(existsSync(bin), "build first").toBe(true);
    const child = spawn(process.execPath, [bin, "--port", "0", "--api-key", "sk-bin-test", "--models", "a,b"], { stdio: ["ignore", "pipe", "pipe"] });
    try {
      const [line] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
      const url = /listening at (http:\S+\/v1)$/.exec(line)?.[1];
      expect(url).toBeDefined();
      expect(line).not.toContain("sk-bin-test");
      const res = await fetch(`${url}/models`, { headers: { authorization: "Bearer sk-bin-test" } });
      expect(((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toEqual(["a", "b"]);
    } finally {
      child.kill("SIGTERM");
    }
    const [code] = (await once(child, "exit")) as [number];
    expect(code).toBe(0);
  });

  it("refuses to start without an API key", async () => {
    const child = spawn(process.execPath, [bin, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    const [code] = (await once(child, "exit")) as [number];
    expect(code).toBe(2);
  });
});
