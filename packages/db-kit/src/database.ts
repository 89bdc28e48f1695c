import pg from "pg";

const NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertDatabaseName(name: string): void {
  if (!NAME.test(name)) throw new Error(`invalid database name "${name}": use 1-63 of a-z 0-9 _`);
}

/** The server URL with its database replaced by `name`. */
export function databaseUrl(serverUrl: string, name: string): string {
  assertDatabaseName(name);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Connection settings as discrete fields (pg lets a connectionString override `database`). */
export function connectionConfig(url: string): pg.ClientConfig {
  const u = new URL(url);
  const config: pg.ClientConfig = {
    host: decodeURIComponent(u.hostname).replace(/^\[|\]$/g, "") || "127.0.0.1",
    port: u.port ? Number(u.port) : 5432,
    user: decodeURIComponent(u.username) || "postgres",
    database: decodeURIComponent(u.pathname.slice(1)) || "postgres",
  };
  if (u.password) config.password = decodeURIComponent(u.password);
  const sslmode = u.searchParams.get("sslmode");
  if (sslmode && sslmode !== "disable") config.ssl = { rejectUnauthorized: sslmode === "verify-full" };
  return config;
}

async function withAdminClient<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ ...connectionConfig(serverUrl), database: "postgres" });
  // A server that goes away between two queries emits 'error': the next query fails instead.
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates the database when it does not exist. Safe when several processes race. */
export async function ensureDatabase(serverUrl: string, name: string): Promise<"created" | "exists"> {
  assertDatabaseName(name);
  return withAdminClient(serverUrl, async (client) => {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount) return "exists";
    try {
      await client.query(`CREATE DATABASE "${name}"`);
      return "created";
    } catch (err) {
      // 42P04 duplicate_database; 23505 when two CREATE DATABASE race on the catalog.
      const code = (err as { code?: string }).code;
      if (code === "42P04" || code === "23505") return "exists";
      throw err;
    }
  });
}

/**
 * Drops the database, forcing off whatever sessions remain. It first waits (up to `graceMs`)
 * for sessions that are already closing: `pg.Pool#end()` resolves before its connections have
 * closed, and a session terminated mid-close reaches its client as a FATAL 57P01 error.
 */
export async function dropDatabase(serverUrl: string, name: string, graceMs = 2_000): Promise<void> {
  assertDatabaseName(name);
  await withAdminClient(serverUrl, async (client) => {
    const until = Date.now() + graceMs;
    for (;;) {
      const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name]);
      if (rows[0]!.n === 0 || Date.now() >= until) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/** Is the database answering? For health endpoints; never throws. */
export async function ping(query: () => Promise<unknown>, timeoutMs = 1_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      query(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
