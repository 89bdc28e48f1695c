import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@gateway/testkit";

/**
 * PostgreSQL, NATS and Redis of this benchmark's own, on free ports, so that what their
 * processes do in a window is this stack's alone (the machine's are shared with other
 * stacks and test runs). PostgreSQL gets the machine's non-default settings that matter
 * for counts (autovacuum off, 128 MB shared buffers); NATS and Redis are configured as the
 * deployment files run them (below), in a temporary directory. Each is stopped by `stop`.
 */
export type PrivateServers = {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  /** The postmaster (its children are the backends and PostgreSQL's own processes). */
  postgresPid: number;
  natsPid: number;
  redisPid: number;
  stop(): Promise<void>;
};

const PG_BIN = "/usr/lib/postgresql/15/bin";

async function listening(port: number, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: "127.0.0.1", port }, () => {
        s.destroy();
        resolve(true);
      });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
    setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
  });
}

export async function startPrivateServers(): Promise<PrivateServers> {
  const dir = mkdtempSync(join(tmpdir(), "gw-private-"));
  // PostgreSQL refuses to run as root: the cluster belongs to the postgres user.
  const asPostgres = process.getuid?.() === 0;
  const pgData = join(dir, "pg");
  const pgPort = await freePort();
  const run = (cmd: string, args: string[]) =>
    asPostgres
      ? execFileSync("su", ["postgres", "-c", [cmd, ...args].map((a) => `'${a}'`).join(" ")], { stdio: "ignore" })
      : execFileSync(cmd, args, { stdio: "ignore" });
  if (asPostgres) execFileSync("chown", ["postgres", dir]);
  run(`${PG_BIN}/initdb`, ["-D", pgData, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const pgArgs = [
    "-D",
    pgData,
    "-p",
    String(pgPort),
    "-k",
    dir,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "autovacuum=off",
    "-c",
    "shared_buffers=128MB",
    "-c",
    "max_connections=200",
  ];
  const postgres = asPostgres
    ? spawn("su", ["postgres", "-c", `exec ${PG_BIN}/postgres ${pgArgs.map((a) => `'${a}'`).join(" ")}`], { stdio: "ignore" })
    : spawn(`${PG_BIN}/postgres`, pgArgs, { stdio: "ignore" });
  const natsPort = await freePort();
  // As docker-compose.yml and deploy/ run them: NATS on one Go thread at a time (GOMAXPROCS=1,
  // docs/decisions/0307; PRIVATE_NATS_GOMAXPROCS to compare), Redis writing every command to
  // its append-only file before answering, its timer at 1 Hz.
  const nats = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(natsPort), "-js", "-sd", join(dir, "nats")], {
    stdio: "ignore",
    env: { ...process.env, GOMAXPROCS: process.env.PRIVATE_NATS_GOMAXPROCS ?? "1" },
  });
  const redisPort = await freePort();
  const redis = spawn(
    "redis-server",
    ["--port", String(redisPort), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--hz", "1"],
    { stdio: "ignore" },
  );
  await Promise.all([listening(pgPort), listening(natsPort), listening(redisPort)]);
  // With `su`, the child is su; the postmaster is the process that owns the data directory.
  const postgresPid = Number(readFileSync(join(pgData, "postmaster.pid"), "utf8").split("\n")[0]);
  return {
    databaseUrl: `postgresql://postgres@127.0.0.1:${pgPort}/postgres`,
    natsUrl: `nats://127.0.0.1:${natsPort}`,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    postgresPid,
    natsPid: nats.pid!,
    redisPid: redis.pid!,
    async stop() {
      await Promise.all([stopChild(nats), stopChild(redis)]);
      process.kill(postgresPid, "SIGINT"); // fast shutdown
      await stopChild(postgres);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
