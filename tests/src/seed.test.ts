import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { call, REPO_ROOT, signIn, startStack, type Stack } from "@gateway/testkit";

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

const keyOf = (out: string) => /X-API-Key: (gw_\S+)"/.exec(out)?.[1];

function complete(key: string) {
  return fetch(`${stack.edgeUrl}/v1/apps/ai/demo/v1/chat/completions`, {
    method: "POST",
    headers: { "X-API-Key": key, "content-type": "application/json" },
    body: JSON.stringify({ model: "demo-small", messages: [{ role: "user", content: "Hello, gateway" }] }),
  });
}

/** The summary lines at the top: "  <label> <what happened>". */
const summary = (out: string) => [...out.split("\n\n")[0]!.matchAll(/^ {2}(\w+) +(.+)$/gm)].map((m) => ({ label: m[1]!, text: m[2]! }));
const usd = (units: number) => `USD ${Math.floor(units / 10_000)}.${String(units % 10_000).padStart(4, "0")}`;

describe("the demo seed", () => {
  let firstKey = "";
  let secondOut = "";

  it("prints a curl line that gets a metered completion", async () => {
    const out = await seed();
    firstKey = keyOf(out)!;
    expect(firstKey).toBeDefined();
    expect(out).toContain("new OpenAI(");
    expect(out).toContain(`${stack.edgeUrl}/app/`);
    const res = await complete(firstKey);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-service-final-cost")).toMatch(/^\d+\.\d{4}$/);
    expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe("Mock reply to: Hello, gateway");
    // Each label is said once: "operator admin@…", not "operator  operator admin@…".
    const lines = summary(out);
    expect(lines.map((l) => l.label)).toEqual(["operator", "tenant", "balance", "upstream", "model", "instance", "key"]);
    for (const { label, text } of lines) expect(text.startsWith(label), `${label}: ${text}`).toBe(false);
  });

  it("run again, keeps the earlier key working, says so, and prints the balance as it is", async () => {
    secondOut = await seed();
    const secondKey = keyOf(secondOut)!;
    expect(secondKey).not.toBe(firstKey);
    expect((await complete(firstKey)).status).toBe(200);
    expect((await complete(secondKey)).status).toBe(200);
    expect(summary(secondOut).find((l) => l.label === "key")!.text).toMatch(/1 earlier demo key still works/);

    // The balance line shows what the tenant has after the first run's completion,
    // not the first credit's answer replayed.
    const token = await signIn(stack.edgeUrl, "demo@gateway.local", "demo-password-123");
    const third = await seed();
    const now = (await call<{ data: { available_units: number; reserved_units: number } }>(stack.edgeUrl, "GET", "/console/balance", { token })).body.data;
    expect(now.available_units).toBeLessThan(100_000);
    const balanceLine = summary(third).find((l) => l.label === "balance")!.text;
    expect(balanceLine).toContain(`${usd(now.available_units)} available`);
    expect(balanceLine).toMatch(/credit was given on an earlier run/);
    expect(summary(third).find((l) => l.label === "key")!.text).toMatch(/2 earlier demo keys still work/);
  });

  it("the README's openai SDK snippet runs as written and reads the cost headers", async () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const snippet = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(snippet).toContain(".withResponse()");
    const code = snippet!.replace('"gw_…"', JSON.stringify(keyOf(secondOut))).replaceAll("http://127.0.0.1:8080", stack.edgeUrl);
    // Inside tests/ so that `openai` resolves from this package's dependencies.
    const dir = mkdtempSync(join(REPO_ROOT, "tests", ".snippet-"));
    try {
      writeFileSync(join(dir, "snippet.mjs"), code);
      const { stdout } = await run(process.execPath, [join(dir, "snippet.mjs")], { cwd: dir, timeout: 30_000 });
      const [content, ids, costs] = stdout.trim().split("\n");
      expect(content).toBe("Mock reply to: Hello, gateway");
      expect(ids).toMatch(/^[A-Za-z0-9_-]+ \S+$/);
      expect(costs).toMatch(/^\d+\.\d{4} \d+\.\d{4}$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the README's Anthropic SDK snippet runs as written: the message, its usage and the charge", async () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const snippet = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!).find((s) => s.includes("@anthropic-ai/sdk"));
    expect(snippet).toBeDefined();
    const code = snippet!.replace('"gw_…"', JSON.stringify(keyOf(secondOut))).replaceAll("http://127.0.0.1:8080", stack.edgeUrl);
    const dir = mkdtempSync(join(REPO_ROOT, "tests", ".snippet-"));
    try {
      writeFileSync(join(dir, "snippet.mjs"), code);
      const { stdout } = await run(process.execPath, [join(dir, "snippet.mjs")], { cwd: dir, timeout: 30_000 });
      const [message, usage] = stdout.trim().split("\n");
      expect(message).toBe("Mock reply to: Hello, gateway end_turn");
      expect(usage).toMatch(/^\d+ \d+ \d+\.\d{4}$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the README's tool-call snippet runs as written: a tool call, then the answer to its result", async () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const snippet = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!).find((s) => s.includes("tool_calls"));
    expect(snippet).toBeDefined();
    const code = snippet!.replace('"gw_…"', JSON.stringify(keyOf(secondOut))).replaceAll("http://127.0.0.1:8080", stack.edgeUrl);
    const dir = mkdtempSync(join(REPO_ROOT, "tests", ".snippet-"));
    try {
      writeFileSync(join(dir, "snippet.mjs"), code);
      const { stdout } = await run(process.execPath, [join(dir, "snippet.mjs")], { cwd: dir, timeout: 30_000 });
      expect(stdout.trim().split("\n")).toEqual(['get_weather {"city":"mock"}', "Mock reply to tool results: 21 °C, clear"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the README's newcomer command works from a fresh terminal's clean shell, where pnpm is not on PATH", async () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    // What the README tells a newcomer to run in another terminal once the stack is up.
    const command = /With the stack running, `([^`]+)` \(in another terminal\)/.exec(readme)?.[1];
    expect(command).toBe("./scripts/seed.sh");
    const stackSays = readFileSync(join(REPO_ROOT, "scripts", "stack.mjs"), "utf8");
    expect(stackSays).toContain(`demo data  ${command}`);
    // A new terminal: nothing of this process's environment, only the system's PATH.
    const vars = {
      GATEWAY_URL: stack.edgeUrl,
      BOOTSTRAP_ADMIN_EMAIL: stack.admin.email,
      BOOTSTRAP_ADMIN_PASSWORD: stack.admin.password,
      MOCK_PROVIDER_URL: provider.url,
    };
    const exports = Object.entries(vars)
      .map(([k, v]) => `export ${k}='${v}'`)
      .join("; ");
    const shell = (script: string) =>
      run("env", ["-i", `HOME=${process.env.HOME ?? "/root"}`, "PATH=/usr/bin:/bin", "bash", "-c", script], { cwd: REPO_ROOT, timeout: 60_000 });
    expect((await shell("command -v pnpm || echo none")).stdout.trim()).not.toContain(join(REPO_ROOT, ".tools"));
    const { stdout } = await shell(`${exports}; ${command}`);
    const key = keyOf(stdout)!;
    expect(key).toMatch(/^gw_/);
    expect(stdout).toContain(`${stack.edgeUrl}/app/`);
    // The curl line it prints, run as printed, gets a metered completion.
    const curl = /^\s*(curl -si .+)$/m.exec(stdout)?.[1];
    expect(curl).toContain("X-API-Key:");
    const answered = await shell(curl!);
    expect(answered.stdout).toMatch(/^HTTP\/1\.1 200/);
    expect(answered.stdout.toLowerCase()).toContain("x-service-final-cost:");
  });
});
