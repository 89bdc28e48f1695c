// PostgreSQL, NATS and Redis of the benchmark's own, configured as docker-compose.yml
// configures them, so that an idle benchmark measures the stack as it is deployed and not the
// machine's shared servers (their other databases, clients and settings).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, REPO_ROOT } from "@gateway/testkit";

export type OwnServers = {
  databaseUrl: string;
  natsUrl: string;
  redisUrl: string;
  /** PostgreSQL's postmaster (its children are the cluster's other processes). */
  postmaster: number;
  nats: number;
  redis: number;
  /** The settings each was started with (from docker-compose.yml). */
  settings: { postgres: string[]; nats: string[]; redis: string[] };
  stop(): Promise<void>;
};

/**
 * The command line docker-compose.yml gives a service (`command: [...]`, a JSON array on one
 * line), so that the benchmark runs what the compose file and the Kubernetes manifests ship.
 */
export function composeCommand(service: "postgres" | "nats" | "redis"): string[] {
  const file = readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8");
  // Under `services:` (the anchors above it name the services too).
  const text = file.slice(file.indexOf("\nservices:\n"));
  const block = new RegExp(`^ {2}${service}:\\n((?: {4}.*\\n|\\s*\\n)*)`, "m").exec(text)?.[1] ?? "";
  const line = /^ {4}command: (\[.*\])\s*$/m.exec(block)?.[1];
  return line ? (JSON.parse(line) as string[]) : [];
}

/** The PostgreSQL settings of the compose file: the values of its `-c` options. */
export function postgresSettings(): string[] {
  const command = composeCommand("postgres");
  return command.flatMap((arg, i) => (command[i - 1] === "-c" ? [arg] : []));
}

/** The direct children of a process (`/proc/<pid>/task/<pid>/children`). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * CPU seconds of the children a process has waited for (`cutime + cstime` of `/proc/<pid>/stat`,
 * in clock ticks of 10 ms): for a postmaster, the processes of its cluster that have ended
 * (autovacuum workers, closed connections), whose own figures are gone with them.
 */
export function reapedCpu(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 16 and 17 of stat(5), counted from the state (field 3) here.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

async function waitForPort(port: number, what: string, proc?: ChildProcess, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (proc && proc.exitCode !== null) throw new Error(`${what} exited (${proc.exitCode})`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (up) return;
    if (Date.now() > until) throw new Error(`${what} not listening on ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function postgresBin(): string {
  const versions = readdirSync("/usr/lib/postgresql").sort();
  const version = versions.includes("15") ? "15" : versions[versions.length - 1];
  if (!version) throw new Error("no PostgreSQL in /usr/lib/postgresql");
  return `/usr/lib/postgresql/${version}/bin`;
}

/** Runs a shell command as the postgres user when this process is root (initdb refuses root), else as itself. */
function asPostgres(command: string): void {
  if (process.getuid?.() === 0) execFileSync("su", ["postgres", "-c", command], { stdio: "pipe" });
  else execFileSync("sh", ["-c", command], { stdio: "pipe" });
}

/**
 * Starts a PostgreSQL cluster, a NATS server with JetStream and a Redis of this benchmark's own
 * on free ports, in a temporary directory, each with the settings of docker-compose.yml
 * (PostgreSQL's `-c` options, NATS's and Redis's flags; the compose file's data paths and
 * monitoring port are replaced). `stop` stops them and removes the directory. The machine's
 * shared servers are not touched.
 */
export async function startOwnServers(): Promise<OwnServers> {
  const dir = mkdtempSync(join(tmpdir(), "gw-idle-servers-"));
  const stops: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  const stop = async () => {
    for (const s of stops.reverse()) await Promise.resolve(s()).catch(() => undefined);
  };
  try {
    // PostgreSQL: a fresh cluster, owned by postgres.
    // PRIVATE_PG_SETTINGS: more `-c` settings, comma-separated (e.g. shared_preload_libraries=pg_stat_statements while investigating).
    const pgSettings = [...postgresSettings(), ...(process.env.PRIVATE_PG_SETTINGS ?? "").split(",").filter(Boolean)];
    const bin = postgresBin();
    const pgDir = join(dir, "pg");
    if (process.getuid?.() === 0) execFileSync("chown", ["postgres:postgres", dir]);
    asPostgres(`${bin}/initdb -D ${pgDir} -U postgres --auth=trust -E UTF8 >/dev/null`);
    const pgPort = await freePort();
    const options = [`-p ${pgPort}`, `-k ${dir}`, "-c listen_addresses=127.0.0.1", ...pgSettings.map((s) => `-c ${s}`)].join(" ");
    asPostgres(`${bin}/pg_ctl -D ${pgDir} -o '${options}' -l ${join(dir, "pg.log")} -w -t 60 start >/dev/null`);
    stops.push(() => asPostgres(`${bin}/pg_ctl -D ${pgDir} -m fast -w stop >/dev/null`));
    const postmaster = Number(readFileSync(join(pgDir, "postmaster.pid"), "utf8").split("\n")[0]);

    // NATS: the compose file's flags, its store in the directory, no monitoring port.
    const natsPort = await freePort();
    const natsArgs: string[] = [];
    const fromCompose = composeCommand("nats");
    for (let i = 0; i < fromCompose.length; i++) {
      const arg = fromCompose[i]!;
      if (arg === "-sd" || arg === "--store_dir") {
        natsArgs.push(arg, join(dir, "nats"));
        i++;
      } else if (arg === "-m" || arg === "--http_port") i++;
      else natsArgs.push(arg);
    }
    // As the compose file's environment: one Go thread at a time (decision 0307; PRIVATE_NATS_GOMAXPROCS to compare).
    // PRIVATE_NATS_PROFILE_PORT: nats-server's pprof HTTP port (goroutine dumps while investigating).
    const profile = process.env.PRIVATE_NATS_PROFILE_PORT ? ["--profile", process.env.PRIVATE_NATS_PROFILE_PORT] : [];
    const nats = spawn("nats-server", [...natsArgs, ...profile, "-a", "127.0.0.1", "-p", String(natsPort)], {
      stdio: "ignore",
      env: { ...process.env, GOMAXPROCS: process.env.PRIVATE_NATS_GOMAXPROCS ?? "1" },
    });
    stops.push(() => stopChild(nats));
    await waitForPort(natsPort, "nats-server", nats);

    // Redis: the compose file's flags (no snapshots, append-only with fsync, hz 1), its files in the directory.
    const redisPort = await freePort();
    const redisArgs = composeCommand("redis").slice(1);
    const redis = spawn("redis-server", [...redisArgs, "--port", String(redisPort), "--bind", "127.0.0.1", "--dir", dir], { stdio: "ignore" });
    stops.push(() => stopChild(redis));
    await waitForPort(redisPort, "redis-server", redis);

    return {
      databaseUrl: `postgresql://postgres@127.0.0.1:${pgPort}/postgres`,
      natsUrl: `nats://127.0.0.1:${natsPort}`,
      redisUrl: `redis://127.0.0.1:${redisPort}`,
      postmaster,
      nats: nats.pid!,
      redis: redis.pid!,
      settings: { postgres: pgSettings, nats: natsArgs, redis: redisArgs },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Starts the servers (startOwnServers) and points this process's environment at them:
 * DATABASE_URL, NATS_URL and REDIS_URL, which startStack, the test kit's clients and the
 * benchmarks' child processes read.
 */
export async function useOwnServers(): Promise<OwnServers> {
  const servers = await startOwnServers();
  process.env.DATABASE_URL = servers.databaseUrl;
  process.env.NATS_URL = servers.natsUrl;
  process.env.REDIS_URL = servers.redisUrl;
  return servers;
}

/** The settings the servers run with, in one line (`postgres -c …; nats-server …; redis-server …`). */
export function serverSettings(servers: OwnServers): string {
  const { postgres, nats, redis } = servers.settings;
  return `postgres ${postgres.map((s) => `-c ${s}`).join(" ") || "(defaults)"}; nats-server ${nats.join(" ")}; redis-server ${redis.map((a) => (a === "" ? '""' : a)).join(" ")}`;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}
