import { call, newTenant, signIn, type Stack } from "@gateway/testkit";

export type Caller = { token: string; userId: string };

/** A signed-in user of every kind the contract distinguishes on /ops and /console. */
export type Callers = {
  platformAdmin: Caller;
  admin: Caller;
  finance: Caller;
  /** A tenant owner without a platform role. */
  tenant: Caller & { tenantId: string };
};

/** The stack's platform admin, plus an admin, a finance operator and a tenant user. */
export async function callers(stack: Stack): Promise<Callers> {
  const token = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
  const me = await call(stack.edgeUrl, "GET", "/console/me", { token });
  const platformAdmin = { token, userId: me.body.data.user_id as string };
  const operator = async (role: "admin" | "finance"): Promise<Caller> => {
    const user = await newTenant(stack.edgeUrl, role);
    const granted = await call(stack.edgeUrl, "PUT", `/ops/users/${user.userId}/platform-role`, { token, body: { role } });
    if (granted.status !== 200) throw new Error(`granting ${role} failed: ${granted.status} ${JSON.stringify(granted.body)}`);
    return { token: await signIn(stack.edgeUrl, user.email, user.password), userId: user.userId };
  };
  const tenant = await newTenant(stack.edgeUrl, "customer");
  return { platformAdmin, admin: await operator("admin"), finance: await operator("finance"), tenant };
}

export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export type AuditRow = { event_id: string; type: string; source: string; request_id: string | null; data: Record<string, any> };

/** Audit events of a type, as the jobs service stored them from NATS. */
export function auditEvents(stack: Stack, type: string): Promise<AuditRow[]> {
  return stack.sql<AuditRow>("jobs", "SELECT event_id, type, source, request_id, data FROM audit_events WHERE type = $1 ORDER BY occurred_at, event_id", [
    type,
  ]);
}

/** The audit event a request caused (waits for the outbox and the consumer). */
export async function auditOf(stack: Stack, requestId: string): Promise<AuditRow> {
  const rows = await eventually(
    () => stack.sql<AuditRow>("jobs", "SELECT event_id, type, source, request_id, data FROM audit_events WHERE request_id = $1", [requestId]),
    (r) => r.length > 0,
  );
  if (rows.length !== 1) throw new Error(`expected one audit event for ${requestId}, got ${rows.length}`);
  return rows[0]!;
}
