// Claude Code itself (@anthropic-ai/claude-code from npm, its native binary from the same
// registry) in print mode, pointed at a managed instance with ANTHROPIC_BASE_URL and
// ANTHROPIC_API_KEY, non-essential traffic off, against the mock provider (CONTRACT.md 6c).
// Its settings and command line are the README's, run as written. The model asks for Claude Code's Read tool; Claude Code reads the file, sends the result
// back and prints the answer. Every request it made is a completed usage record (api
// "messages") charged at the cost of its usage, and the balance drops by their sum.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "@gateway/testkit";
import { balance, balanceWithin1s, customer, expectedCost, meteredStack, type Customer } from "./support/managed-ai.js";

const metered = meteredStack();

/** cli-wrapper.cjs finds the platform's native binary (an optional dependency) and runs it: no install script needed. */
const CLAUDE = join(dirname(createRequire(import.meta.url).resolve("@anthropic-ai/claude-code/package.json")), "cli-wrapper.cjs");

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "claude-code-"));
});
afterAll(() => rm(work, { recursive: true, force: true }));

/**
 * The README's Claude Code lines (the sh block with ANTHROPIC_BASE_URL): its `export`ed
 * settings and its `claude` arguments, for the test's instance, key and model alias. The
 * test runs them as written, so the README says what works.
 */
function readmeClaude(c: Customer, alias: string): { env: Record<string, string>; args: string[] } {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes("ANTHROPIC_BASE_URL"));
  if (!block) throw new Error("README.md has no Claude Code block");
  const local = (text: string) =>
    text
      .replace("http://127.0.0.1:8080/v1/apps/ai/demo", `${metered.stack.edgeUrl}/v1/apps/ai/${alias}`)
      .replace("gw_…", c.key)
      .replaceAll("demo-small", "small");
  const env: Record<string, string> = {};
  let args: string[] = [];
  for (const line of block.split("\n").map(local)) {
    if (line.startsWith("export ")) for (const [, name, value] of line.matchAll(/(\w+)=(\S+)/g)) env[name!] = value!;
    else if (line.startsWith("claude ")) args = [...line.slice("claude ".length).matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
  }
  return { env, args };
}

/** `claude` with the README's settings and a fresh home in `work`: nothing but the gateway to talk to. */
function claude(c: Customer, alias: string, extraArgs: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const readme = readmeClaude(c, alias);
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(work, "home"), ...readme.env };
  const args = [...readme.args, ...extraArgs];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLAUDE, ...args], { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("Claude Code in print mode", () => {
  it("runs a tool turn through the gateway: its answer comes back, and the records and the balance agree", { timeout: 120_000 }, async () => {
    const { stack, provider, op, model } = metered;
    const c = await customer(stack, op, { units: 5_000_000, alias: "code", defaultModel: "small" });
    const before = (await balance(stack, c)).available_units;
    await writeFile(join(work, "note.txt"), "The launch code is 7-4-1.\n");
    provider.set({ toolCalls: [{ name: "Read", arguments: JSON.stringify({ file_path: join(work, "note.txt") }) }] });

    const run = await claude(c, "code", ["--output-format", "json", "--no-session-persistence"]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const result = JSON.parse(run.stdout) as { is_error: boolean; result: string; num_turns: number };
    expect(result.is_error).toBe(false);
    // The model's tool call ran in Claude Code, and its result came back through the gateway.
    expect(result.result).toMatch(/^Mock reply to tool results: .*The launch code is 7-4-1\./s);

    // What Claude Code sent, as the provider got it: the Read tool offered, then its result.
    const calls = provider.requests.filter((r) => r.path === "/v1/chat/completions").map((r) => r.body as Record<string, unknown>);
    const withTools = calls.filter((b) => Array.isArray(b.tools) && (b.tools as { function: { name: string } }[]).some((t) => t.function.name === "Read"));
    expect(withTools.length).toBeGreaterThanOrEqual(2);
    const last = withTools.at(-1)!.messages as { role: string; tool_call_id?: string; content: unknown }[];
    expect(last.some((m) => m.role === "tool" && JSON.stringify(m.content).includes("The launch code is 7-4-1."))).toBe(true);
    for (const body of calls) expect(JSON.stringify(body)).not.toMatch(/cache_control|"thinking"|"metadata"/);

    // Every request it made is a completed record on this route, charged at the cost of its usage.
    const records = await stack.sql<{ status: string; api: string; reserved_units: string; final_units: string; usage_json: string }>(
      "managed-ai",
      "SELECT status, api, reserved_units::text, final_units::text, usage_json FROM usage_records WHERE tenant_id = $1",
      [c.tenantId],
    );
    expect(records.length).toBe(calls.length);
    let charged = 0n;
    for (const r of records) {
      const usage = JSON.parse(r.usage_json) as { prompt_tokens: number; completion_tokens: number };
      const cost = expectedCost(BigInt(usage.prompt_tokens), BigInt(usage.completion_tokens), model);
      expect(r).toMatchObject({ status: "completed", api: "messages", final_units: cost.toString() });
      expect(BigInt(r.reserved_units)).toBeGreaterThanOrEqual(cost);
      charged += cost;
    }
    expect(charged).toBeGreaterThan(0n);
    expect(await balanceWithin1s(stack, c, { available_units: before - Number(charged), reserved_units: 0 })).toEqual({
      available_units: before - Number(charged),
      reserved_units: 0,
    });
  });
});
