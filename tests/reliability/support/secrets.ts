import type { ServiceName, Stack } from "@gateway/testkit";

export type SecretHit = { where: string; secret: string };

/**
 * Every log line of every process and every event of the audit trail, searched
 * for each secret the run created (API keys, passwords, session and refresh
 * tokens, the provider key, the JWT secret). Reports where, with the secret
 * shortened so the report itself leaks nothing.
 */
export async function findSecrets(stack: Stack, processes: ServiceName[], secrets: string[]): Promise<SecretHit[]> {
  const wanted = [...new Set(secrets.filter((s) => s && s.length >= 8))];
  const hits: SecretHit[] = [];
  const scan = (where: string, text: string) => {
    for (const s of wanted) if (text.includes(s)) hits.push({ where, secret: `${s.slice(0, 4)}…(${s.length})` });
  };
  for (const name of processes) {
    for (const line of stack.logs(name)) scan(`${name} log`, typeof line.raw === "string" ? line.raw : JSON.stringify(line));
  }
  const events = await stack.sql<{ event_id: string; type: string; data: unknown }>("jobs", "SELECT event_id, type, data FROM audit_events");
  for (const e of events) scan(`event ${e.type} ${e.event_id}`, JSON.stringify(e.data));
  return hits;
}

/** How many lines and events findSecrets reads (for the report). */
export async function scannedCount(stack: Stack, processes: ServiceName[]): Promise<number> {
  const [row] = await stack.sql<{ n: string }>("jobs", "SELECT count(*)::text AS n FROM audit_events");
  return processes.reduce((n, p) => n + stack.logs(p).length, 0) + Number(row?.n ?? 0);
}
