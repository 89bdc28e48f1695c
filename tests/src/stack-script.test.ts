// ./scripts/stack.sh as a person runs it in a terminal: Ctrl-C there sends SIGINT to
// the whole foreground process group. Every service must then drain once and stop
// cleanly, never hear a second signal ("second signal: exiting now").
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "nats";
import { afterAll, describe, expect, it } from "vitest";
import { dropDatabase } from "@gateway/db-kit";
import { subjectsFor } from "@gateway/events";
import { freePort, REPO_ROOT } from "@gateway/testkit";

const SERVICES = ["ledger", "managed-ai", "jobs", "messaging", "files", "edge"];
const run = randomBytes(4).toString("hex");
const prefix = `gw_${run}_stack`;
const namespace = `t${run}`;
const logDirs: string[] = [];
const server = process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

afterAll(async () => {
  for (const s of SERVICES) await dropDatabase(server, `${prefix}_${s.replace("-", "_")}`);
  const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  await (await nc.jetstreamManager()).streams.delete(subjectsFor(namespace).stream).catch(() => undefined);
  await nc.drain();
  for (const dir of logDirs) rmSync(dir, { recursive: true, force: true });
});

const lines = (logDir: string, service: string) =>
  readFileSync(join(logDir, `${service}.log`), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { msg?: string; code?: number; reason?: string });

describe.each([
  ["./scripts/stack.sh", "bash", [join(REPO_ROOT, "scripts", "stack.sh"), "--no-setup"]],
  ["pnpm stack", "pnpm", ["stack", "--no-setup"]],
] as const)("%s", (_name, command, args) => {
  it("stops every service once and cleanly on Ctrl-C (SIGINT to the terminal's process group)", async () => {
    const logDir = mkdtempSync(join(tmpdir(), "gw-stack-"));
    logDirs.push(logDir);
    const port = await freePort();
    const grpc = { LEDGER_GRPC_URL: 0, MANAGED_AI_GRPC_URL: 0, JOBS_GRPC_URL: 0, MESSAGING_GRPC_URL: 0, FILES_GRPC_URL: 0 } as Record<string, number | string>;
    for (const k of Object.keys(grpc)) grpc[k] = `127.0.0.1:${await freePort()}`;
    const env = {
      ...process.env,
      ...(grpc as Record<string, string>),
      PORT: String(port),
      METRICS_PORT: "0",
      MOCK_PROVIDER_PORT: String(await freePort()),
      STACK_DATABASE_PREFIX: prefix,
      STACK_LOG_DIR: logDir,
      NATS_NAMESPACE: namespace,
      REDIS_KEY_PREFIX: namespace,
      LOG_LEVEL: "info",
    };
    // detached: its own process group, like a terminal's foreground job.
    const child = spawn(command, args, { cwd: REPO_ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | string | null>((resolve) => child.on("exit", (code, signal) => resolve(code ?? signal)));
    try {
      const until = Date.now() + 90_000;
      while (!out.includes("AI gateway running at")) {
        if (child.exitCode !== null || Date.now() > until) throw new Error(`the stack did not start:\n${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(out).toContain(`http://127.0.0.1:${port}/app/`);
      // What it tells a newcomer to type next works in a fresh terminal (tests/src/seed.test.ts runs it so).
      expect(out).toContain("demo data  ./scripts/seed.sh");
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);

      process.kill(-child.pid!, "SIGINT");
      // The runner reports when the last service has stopped. bash exec's into it and
      // exits 0 with it; pnpm itself dies of the SIGINT at once, as it always does.
      expect(await exited).toBe(command === "bash" ? 0 : "SIGINT");
      const stopBy = Date.now() + 60_000;
      while (!out.includes("stopped.") && Date.now() < stopBy) await new Promise((r) => setTimeout(r, 200));
    } finally {
      if (child.exitCode === null) {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    expect(out).toContain("stopped.");
    for (const service of SERVICES) {
      const log = lines(logDir, service);
      expect(
        log.filter((l) => l.msg === "second signal: exiting now"),
        service,
      ).toEqual([]);
      expect(log.filter((l) => l.msg === "shutting down").length, service).toBe(1);
      expect(
        log.find((l) => l.msg === "stopped"),
        service,
      ).toMatchObject({ code: 0 });
    }
  }, 150_000);
});
