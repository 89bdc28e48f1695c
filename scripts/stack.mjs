// Runs the edge and every service as child processes on their local defaults,
// with a local OpenAI-compatible mock provider for the managed AI demo, waits
// until the gateway answers, prints where it is, and stops them all on Ctrl-C.
// JSON logs go to .stack/logs/.
//
// Signals: each child runs in its own process group, so the terminal's Ctrl-C
// (sent to the whole foreground group) reaches only this runner, which sends each
// child exactly one SIGTERM: each drains its in-flight work once and stops. A second
// Ctrl-C while they drain forwards a second SIGTERM, which makes them exit at once.
import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log("Usage: node scripts/stack.mjs   (run by ./scripts/stack.sh after the set-up; see ./scripts/stack.sh --help)");
  process.exit(0);
}

const root = fileURLToPath(new URL("..", import.meta.url));
const logDir = process.env.STACK_LOG_DIR ?? join(root, ".stack", "logs");
mkdirSync(logDir, { recursive: true });

// gRPC between the processes over mutual TLS, as in production (docs/decisions/0230): a local
// CA and a certificate per process in .stack/certs (made once by scripts/certs.sh, kept), unless
// GRPC_TLS_CA / GRPC_TLS_CERT / GRPC_TLS_KEY name files of your own (then every process uses those).
const ownTls = ["GRPC_TLS_CA", "GRPC_TLS_CERT", "GRPC_TLS_KEY"].some((name) => process.env[name]);
const certDir = process.env.STACK_CERT_DIR ?? join(root, ".stack", "certs");
if (!ownTls) execFileSync("bash", [join(root, "scripts", "certs.sh"), "--dir", certDir], { stdio: ["ignore", "inherit", "inherit"] });
const tlsEnv = (name) =>
  ownTls ? {} : { GRPC_TLS_CA: join(certDir, "ca.crt"), GRPC_TLS_CERT: join(certDir, `${name}.crt`), GRPC_TLS_KEY: join(certDir, `${name}.key`) };

const port = process.env.PORT ?? "8080";
const env = {
  ...process.env,
  BOOTSTRAP_ADMIN_EMAIL: process.env.BOOTSTRAP_ADMIN_EMAIL ?? "admin@gateway.local",
  BOOTSTRAP_ADMIN_PASSWORD: process.env.BOOTSTRAP_ADMIN_PASSWORD ?? "change-me-admin-password",
  FILES_LOCAL_DIR: process.env.FILES_LOCAL_DIR ?? join(root, ".stack", "files"),
};
// Each gRPC service listens where the edge's <SERVICE>_GRPC_URL says (defaults 50051-50055).
const grpcUrlVars = {
  ledger: "LEDGER_GRPC_URL",
  "managed-ai": "MANAGED_AI_GRPC_URL",
  jobs: "JOBS_GRPC_URL",
  messaging: "MESSAGING_GRPC_URL",
  files: "FILES_GRPC_URL",
};
const dbPrefix = process.env.STACK_DATABASE_PREFIX;
const serviceEnv = (name) => {
  if (name === "mock-provider") return env;
  const own = { ...env, ...tlsEnv(name) };
  delete own.GRPC_PORT; // one per service, from its URL variable below (or its default)
  if (dbPrefix) own.DATABASE_NAME = `${dbPrefix}_${name.replace("-", "_")}`;
  const urlVar = grpcUrlVars[name];
  if (urlVar && env[urlVar]) own.GRPC_PORT = env[urlVar].split(":").pop();
  return own;
};
// The demo provider (packages/mock-provider); ./scripts/seed.sh registers it as an upstream.
const mockPort = process.env.MOCK_PROVIDER_PORT ?? "8090";
const mockKey = process.env.MOCK_PROVIDER_API_KEY ?? "sk-local-demo";
// As in the Dockerfile: V8's memory reducer wakes an idle process every 8 s (docs/decisions/0200).
const entries = {
  ...Object.fromEntries(
    ["ledger", "managed-ai", "jobs", "messaging", "files", "edge"].map((s) => [s, ["--no-memory-reducer", join(root, "apps", s, "dist", "main.js")]]),
  ),
  "mock-provider": [join(root, "packages", "mock-provider", "dist", "bin.js"), "--port", mockPort, "--api-key", mockKey],
};
const services = Object.keys(entries);
const children = new Map();
let stopping = false;

for (const name of services) {
  const out = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
  out.on("error", (err) => console.error(`${name} log: ${err.message}`));
  // detached: a process group of its own, out of reach of the terminal's Ctrl-C.
  const child = spawn(process.execPath, entries[name], { env: serviceEnv(name), stdio: ["ignore", "pipe", "pipe"], detached: true });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  child.stderr.on("data", (chunk) => process.stderr.write(`[${name}] ${chunk}`));
  child.on("error", (err) => console.error(`${name}: ${err.message}`));
  child.on("exit", (code, signal) => {
    children.delete(name);
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); see ${join(logDir, `${name}.log`)}. Stopping the stack.`);
      stop(1);
    } else if (children.size === 0) {
      console.log("stopped.");
      process.exit(process.exitCode ?? 0);
    }
  });
  children.set(name, child);
}

function stop(code = 0) {
  if (stopping) {
    console.log("second Ctrl-C: stopping at once.");
    for (const child of children.values()) child.kill("SIGTERM");
    return;
  }
  stopping = true;
  process.exitCode = code;
  console.log("stopping: every service drains its in-flight work (Ctrl-C again to stop at once)…");
  for (const child of children.values()) child.kill("SIGTERM");
  if (children.size === 0) process.exit(code);
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
process.on("SIGHUP", () => stop(0));
// Should this runner die some other way, its children must not outlive it.
process.on("exit", () => {
  for (const child of children.values()) child.kill("SIGKILL");
});

const url = `http://127.0.0.1:${port}`;
const deadline = Date.now() + 60_000;
for (;;) {
  try {
    if ((await fetch(`${url}/health`)).status === 200) break;
  } catch {
    // not up yet
  }
  if (stopping) break;
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
    console  ${url}/app/   (web console for customers and operators)
    health   ${url}/health
    API      ${url}/openapi.json
    metrics  ${url}/metrics
  mock AI    http://127.0.0.1:${mockPort}/v1 (OpenAI-compatible; ./scripts/seed.sh registers it as an upstream)
  operator   ${env.BOOTSTRAP_ADMIN_EMAIL} / ${env.BOOTSTRAP_ADMIN_PASSWORD === "change-me-admin-password" ? "change-me-admin-password" : "(from BOOTSTRAP_ADMIN_PASSWORD)"}
  demo data  ./scripts/seed.sh   (in another terminal; it finds the project's Node.js itself)
  logs       ${logDir}
  gRPC       mutual TLS between the services (${ownTls ? "GRPC_TLS_* of your own" : `local CA in ${certDir}`})
  Ctrl-C stops everything.
`);
}
