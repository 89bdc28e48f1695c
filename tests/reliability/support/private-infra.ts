import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as natsConnect } from "nats";
import pg from "pg";
import { freePort } from "@gateway/testkit";

/*
 * The fault suite restarts PostgreSQL and NATS. It never touches the
 * machine's shared servers (other suites and agents use them): it starts its
 * own, on their own ports, with their data in a temporary directory.
 */

const asRoot = process.getuid?.() === 0;

function pgBin(name: string): string {
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base) ? readdirSync(base).sort().reverse() : [];
  for (const v of versions) if (existsSync(join(base, v, "bin", name))) return join(base, v, "bin", name);
  return name; // on PATH
}

/** Runs a PostgreSQL tool as the postgres user when we are root (initdb refuses root). */
function pgRun(args: string[], options: { check?: boolean } = {}): void {
  const [cmd, ...rest] = args;
  const r = asRoot
    ? spawnSync("runuser", ["-u", "postgres", "--", pgBin(cmd!), ...rest], { encoding: "utf8" })
    : spawnSync(pgBin(cmd!), rest, { encoding: "utf8" });
  if ((options.check ?? true) && r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > end) throw new Error(`${what} not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export type PrivatePostgres = {
  url: string;
  port: number;
  /** Stops it the way a crash would (immediate: no checkpoint, clients cut), then starts it again. */
  restart(downMs?: number): Promise<void>;
  close(): Promise<void>;
};

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "gw-reliability-pg-"));
  chmodSync(dir, 0o777);
  const data = join(dir, "data");
  const log = join(dir, "postgres.log");
  pgRun(["initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  // fsync off: a crash of the server process (stop -m immediate) leaves what it wrote in the
  // operating system's cache. Commits stay synchronous, as the services rely on: with
  // synchronous_commit off such a crash drops commits already answered (a usage record gone
  // while the ledger kept its charge, posted after the restart), a loss no deployment allows.
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c full_page_writes=off`;
  const start = () => pgRun(["pg_ctl", "-D", data, "-o", opts, "-l", log, "-w", "-t", "60", "start"]);
  const stop = (mode: "fast" | "immediate") => pgRun(["pg_ctl", "-D", data, "-m", mode, "-w", "-t", "60", "stop"], { check: false });
  start();
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const ready = async () => {
    const c = new pg.Client({ connectionString: url });
    c.on("error", () => undefined);
    try {
      await c.connect();
      await c.query("SELECT 1");
      return true;
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  await until("private PostgreSQL", ready);
  return {
    url,
    port,
    async restart(downMs = 1_000) {
      stop("immediate");
      await new Promise((r) => setTimeout(r, downMs));
      start();
      await until("private PostgreSQL after restart", ready);
    },
    async close() {
      stop("fast");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type PrivateNats = {
  url: string;
  /** kill -9 and start again on the same port and store (JetStream state survives, as on a real crash). */
  restart(downMs?: number): Promise<void>;
  close(): Promise<void>;
};

export async function startPrivateNats(): Promise<PrivateNats> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "gw-reliability-nats-"));
  const bin = existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server";
  let child: ChildProcess | undefined;
  const url = `nats://127.0.0.1:${port}`;
  const start = async () => {
    child = spawn(bin, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", dir], { stdio: "ignore" });
    child.on("error", () => undefined);
    await until("private NATS", async () => {
      const nc = await natsConnect({ servers: url, reconnect: false, timeout: 500 });
      await nc.close();
      return true;
    });
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await gone;
  };
  await start();
  return {
    url,
    async restart(downMs = 1_000) {
      await kill();
      await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async close() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type PrivateRedis = {
  url: string;
  /**
   * kill -9, then (after `downMs`) start again on the same port and append-only file;
   * resolves, once it answers PING, with when it was started (`performance.now()`): the
   * edge may reconnect before PING is answered here.
   */
  restart(downMs?: number): Promise<number>;
  /** SIGSTOP: the server keeps its connections and answers nothing (a hung Redis). */
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
};

/** Answers PING on `port`? A raw RESP exchange: the tests need no Redis client of their own. */
function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on("error", () => done(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (d) => done(d.toString().startsWith("+PONG")));
  });
}

/**
 * A Redis of the test's own, as a deployment should run it for key limits: every write in
 * the append-only file before it is answered (appendfsync always), so a crash loses no
 * count and a restart hands out no fresh quota (docs/decisions/0235).
 */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "gw-reliability-redis-"));
  const bin = existsSync("/usr/bin/redis-server") ? "/usr/bin/redis-server" : "redis-server";
  const args = ["--bind", "127.0.0.1", "--port", String(port), "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always"];
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(bin, args, { stdio: "ignore" });
    child.on("error", () => undefined);
    await until("private Redis", () => pingRedis(port));
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once("exit", r));
    c.kill("SIGCONT");
    c.kill("SIGKILL");
    await gone;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart(downMs = 1_000) {
      await kill();
      await new Promise((r) => setTimeout(r, downMs));
      const startedAt = performance.now();
      await start();
      return startedAt;
    },
    freeze: () => child?.kill("SIGSTOP"),
    thaw: () => child?.kill("SIGCONT"),
    async close() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
