import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { freePort, REPO_ROOT } from "@gateway/testkit";

export type Started = { url: string; pid: number; stop(): Promise<void> };

async function waitFor(url: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited (${child.exitCode})`);
    try {
      await fetch(url);
      return;
    } catch {
      if (Date.now() > until) throw new Error(`${url} did not answer`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function stopper(child: ChildProcess) {
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
    });
}

/** The local OpenAI-compatible mock provider as its own process (its CPU is measured apart). */
export async function startMock(apiKey: string): Promise<Started> {
  const port = await freePort();
  const bin = join(REPO_ROOT, "packages", "mock-provider", "dist", "bin.js");
  const child = spawn(process.execPath, [bin, "--port", String(port), "--api-key", apiKey], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}/v1`;
  await waitFor(`${url}/models`, child);
  return { url, pid: child.pid!, stop: stopper(child) };
}

/**
 * The Portkey open-source gateway from npm, headless, as the peer. Routed to
 * the mock with `x-portkey-provider: openai` and `x-portkey-custom-host`.
 */
export async function startPortkey(): Promise<Started> {
  const port = await freePort();
  const require = createRequire(import.meta.url);
  const pkg = dirname(require.resolve("@portkey-ai/gateway/package.json"));
  const child = spawn(process.execPath, [join(pkg, "build", "start-server.js"), `--port=${port}`, "--headless"], {
    cwd: pkg,
    stdio: "ignore",
    env: { PATH: process.env.PATH ?? "", NODE_ENV: "production", TRUSTED_CUSTOM_HOSTS: "127.0.0.1,localhost" },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url, child);
  return { url, pid: child.pid!, stop: stopper(child) };
}
