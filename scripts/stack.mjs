// Runs the edge and every service as child processes on their local defaults,
// with a local OpenAI-compatible mock provider for the managed AI demo, waits
// until the gateway answers, prints where it is, and stops them all on Ctrl-C
// (SIGTERM each, which drains in-flight work). JSON logs go to .stack/logs/.
import { spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const logDir = join(root, ".stack", "logs");
mkdirSync(logDir, { recursive: true });

const port = process.env.PORT ?? "8080";
const env = {
  ...process.env,
  BOOTSTRAP_ADMIN_EMAIL: process.env.BOOTSTRAP_ADMIN_EMAIL ?? "admin@gateway.local",
  BOOTSTRAP_ADMIN_PASSWORD: process.env.BOOTSTRAP_ADMIN_PASSWORD ?? "change-me-admin-password",
};
// The demo provider (packages/mock-provider); `pnpm seed` registers it as an upstream.
const mockPort = process.env.MOCK_PROVIDER_PORT ?? "8090";
const mockKey = process.env.MOCK_PROVIDER_API_KEY ?? "sk-local-demo";
const entries = {
  ...Object.fromEntries(["ledger", "managed-ai", "jobs", "messaging", "files", "edge"].map((s) => [s, [join(root, "apps", s, "dist", "main.js")]])),
  "mock-provider": [join(root, "packages", "mock-provider", "dist", "bin.js"), "--port", mockPort, "--api-key", mockKey],
};
const services = Object.keys(entries);
const children = new Map();
let stopping = false;

for (const name of services) {
  const out = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
  const child = spawn(process.execPath, entries[name], { env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  child.stderr.on("data", (chunk) => process.stderr.write(`[${name}] ${chunk}`));
  child.on("exit", (code, signal) => {
    children.delete(name);
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); see ${join(logDir, `${name}.log`)}. Stopping the stack.`);
      stop(1);
    } else if (children.size === 0) process.exit(process.exitCode ?? 0);
  });
  children.set(name, child);
}

function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  process.exitCode = code;
  console.log("stopping…");
  for (const child of children.values()) child.kill("SIGTERM");
  if (children.size === 0) process.exit(code);
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

const url = `http://127.0.0.1:${port}`;
const deadline = Date.now() + 60_000;
for (;;) {
  try {
    if ((await fetch(`${url}/health`)).status === 200) break;
  } catch {
    // not up yet
  }
  if (stopping) process.exit(1);
  if (Date.now() > deadline) {
    console.error(`the gateway did not become healthy; see ${logDir}`);
    stop(1);
    break;
  }
  await new Promise((r) => setTimeout(r, 250));
}
if (!stopping) {
  console.log(`
  AI gateway running at ${url}
    health   ${url}/health
    API      ${url}/openapi.json
    metrics  ${url}/metrics
  mock AI    http://127.0.0.1:${mockPort}/v1 (OpenAI-compatible; pnpm seed registers it as an upstream)
  operator   ${env.BOOTSTRAP_ADMIN_EMAIL} / ${env.BOOTSTRAP_ADMIN_PASSWORD === "change-me-admin-password" ? "change-me-admin-password" : "(from BOOTSTRAP_ADMIN_PASSWORD)"}
  demo data  pnpm seed   (in another terminal)
  logs       ${logDir}
  Ctrl-C stops everything.
`);
}
