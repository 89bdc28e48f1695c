import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { REPO_ROOT, startStack, type Stack } from "@gateway/testkit";

const run = promisify(execFile);
let stack: Stack;
let provider: MockProvider;

beforeAll(async () => {
  provider = await startMockProvider({ apiKey: "sk-local-demo" });
  stack = await startStack();
});
afterAll(async () => {
  await stack?.shutdown();
  await provider?.close();
});

async function seed(): Promise<string> {
  const { stdout } = await run(process.execPath, [join(REPO_ROOT, "scripts", "seed.mjs")], {
    env: {
      ...process.env,
      GATEWAY_URL: stack.edgeUrl,
      BOOTSTRAP_ADMIN_EMAIL: stack.admin.email,
      BOOTSTRAP_ADMIN_PASSWORD: stack.admin.password,
      MOCK_PROVIDER_URL: provider.url,
      MOCK_PROVIDER_API_KEY: "sk-local-demo",
    },
  });
  return stdout;
}

describe("the demo seed", () => {
  it("prints a curl line that gets a metered completion, and can run again", async () => {
    await seed();
    const out = await seed(); // idempotent
    const key = /X-API-Key: (gw_\S+)"/.exec(out)?.[1];
    expect(key).toBeDefined();
    expect(out).toContain("new OpenAI(");
    const res = await fetch(`${stack.edgeUrl}/v1/apps/ai/demo/v1/chat/completions`, {
      method: "POST",
      headers: { "X-API-Key": key!, "content-type": "application/json" },
      body: JSON.stringify({ model: "demo-small", messages: [{ role: "user", content: "Hello, gateway" }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-service-final-cost")).toMatch(/^\d+\.\d{4}$/);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe("Mock reply to: Hello, gateway");
  });
});
