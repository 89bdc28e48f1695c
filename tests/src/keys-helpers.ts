import { call, type newTenant, type Stack } from "@gateway/testkit";

export type Tenant = Awaited<ReturnType<typeof newTenant>>;

export async function createKey(stack: Stack, tenant: Tenant, policy: Record<string, unknown> = {}, baseUrl = stack.edgeUrl) {
  const res = await call(baseUrl, "POST", "/console/keys", { token: tenant.token, body: { name: "test key", scopes: ["*"], ...policy } });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; key: string; prefix: string } & Record<string, unknown>;
}

export function withKey(key: string, headers: Record<string, string> = {}) {
  return { headers: { "X-API-Key": key, ...headers } };
}

/** Polls the audit trail (jobs) until the request's events arrive. */
export async function auditOf(stack: Stack, requestId: string, minCount = 1, timeoutMs = 5_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const rows = await stack.sql<{ type: string; data: Record<string, unknown> }>(
      "jobs",
      "SELECT type, data FROM audit_events WHERE request_id = $1 ORDER BY occurred_at",
      [requestId],
    );
    if (rows.length >= minCount || Date.now() > until) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
}
