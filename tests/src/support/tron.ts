import { randomBytes } from "node:crypto";
import { createClient } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { call, newTenant, signIn, type JsonResponse, type Stack } from "@gateway/testkit";

/** Valid TRON addresses (base58check) for receivers. */
export const RECEIVERS = ["TNQDRWktv1qrLnDT5ZL5ThHZJgGspaEHgM", "TETk6ZoJe5fGYUkrJbXYSsacympnK4fbbd", "TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYH"] as const;
export const RECEIVER = RECEIVERS[0];

export type LeaseCustomer = { tenantId: string; token: string; key: string };

/** A tenant with `units` of balance and a key with `scopes`. */
export async function leaseCustomer(stack: Stack, units: number, scopes: string[] = ["tron:lease", "jobs:read"]): Promise<LeaseCustomer> {
  const tenant = await newTenant(stack.edgeUrl, "tron");
  if (units > 0) {
    const admin = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
    const credited = await call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${tenant.tenantId}/credits`, {
      token: admin,
      body: { units, reason: "test balance" },
    });
    if (credited.status !== 201) throw new Error(`credit: ${credited.status} ${JSON.stringify(credited.body)}`);
  }
  const key = await call(stack.edgeUrl, "POST", "/console/keys", { token: tenant.token, body: { name: "tron", scopes } });
  if (key.status !== 201) throw new Error(`key: ${key.status} ${JSON.stringify(key.body)}`);
  return { tenantId: tenant.tenantId, token: tenant.token, key: key.body.data.key };
}

export function asKey(c: LeaseCustomer, headers: Record<string, string> = {}) {
  return { "X-API-Key": c.key, ...headers };
}

export async function quote(stack: Stack, c: LeaseCustomer, body: Record<string, unknown> = {}): Promise<JsonResponse> {
  return call(stack.edgeUrl, "POST", "/v1/apps/tron/quote", {
    headers: asKey(c),
    body: { receiver: RECEIVER, energy: 65_000, duration_seconds: 3_600, ...body },
  });
}

/** Quotes, then leases with the quote's parameters (overridable) and `max_cost` = the quote's cost. */
export async function quoteAndLease(
  stack: Stack,
  c: LeaseCustomer,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
  quoteBody: Record<string, unknown> = {},
): Promise<{ quote: any; lease: JsonResponse }> {
  const q = await quote(stack, c, quoteBody);
  if (q.status !== 200) throw new Error(`quote: ${q.status} ${JSON.stringify(q.body)}`);
  const d = q.body.data;
  const lease = await call(stack.edgeUrl, "POST", "/v1/apps/tron/lease", {
    headers: asKey(c, headers),
    body: { quote_id: d.quote_id, max_cost: d.cost, receiver: d.receiver, energy: d.energy, duration_seconds: d.duration_seconds, ...extra },
  });
  return { quote: d, lease };
}

export async function getJob(stack: Stack, c: LeaseCustomer, jobId: string): Promise<JsonResponse> {
  return call(stack.edgeUrl, "GET", `/v1/jobs/${jobId}`, { headers: asKey(c) });
}

export async function eventually<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000, stepMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await fn();
    if (ok(last)) return last;
    if (Date.now() > until) throw new Error(`${what}: not reached in ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Polls the job until `ok`; returns its view. */
export async function waitJob(stack: Stack, c: LeaseCustomer, jobId: string, ok: (job: any) => boolean, timeoutMs = 30_000): Promise<any> {
  return (
    await eventually(
      `job ${jobId}`,
      () => getJob(stack, c, jobId),
      (r) => r.status === 200 && ok(r.body.data),
      timeoutMs,
    )
  ).body.data;
}

export async function balance(stack: Stack, c: LeaseCustomer): Promise<{ available_units: number; reserved_units: number }> {
  const res = await call(stack.edgeUrl, "GET", "/console/balance", { token: c.token });
  if (res.status !== 200) throw new Error(`balance: ${res.status}`);
  return res.body.data;
}

/** The ledger's own reconciliation over every tenant (credits − captured = available + held, journal balanced). */
export async function ledgerInvariant(stack: Stack): Promise<{ ok: boolean; detail: unknown }> {
  const ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 30_000, serviceToken: stack.serviceToken, tls: stack.tls });
  try {
    const res = await ledger.CheckInvariant({ all_tenants: true });
    return { ok: res.ok, detail: res };
  } finally {
    ledger.close();
  }
}

export const randomSecret = () => randomBytes(24).toString("hex");
