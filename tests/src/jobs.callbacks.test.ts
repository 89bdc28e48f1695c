import { createHmac, timingSafeEqual } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCallbackReceiver, startTronMock, startStack, type CallbackReceiver, type ReceivedCallback, type Stack, type TronMock } from "@gateway/testkit";
import { eventually, ledgerInvariant, leaseCustomer, quoteAndLease, randomSecret, waitJob } from "./support/tron.js";

// Signed job.updated callbacks, retried with backoff, in live mode.
let stack: Stack;
let tron: TronMock;
const receivers: CallbackReceiver[] = [];
const BASE_DELAY_MS = 40;

beforeAll(async () => {
  tron = await startTronMock();
  stack = await startStack({
    services: ["ledger", "jobs"],
    env: {
      jobs: {
        TRON_MODE: "live",
        TRON_PROVIDER_URL: tron.providerUrl,
        TRON_NODE_URL: tron.nodeUrl,
        TRON_VERIFY_POLL_MS: "100",
        CALLBACK_ALLOW_HTTP_LOOPBACK: "true",
        CALLBACK_BASE_DELAY_MS: String(BASE_DELAY_MS),
        CALLBACK_POLL_MS: "50",
      },
    },
  });
});

afterAll(async () => {
  await stack?.shutdown();
  await tron?.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(respond?: (n: number) => number): Promise<CallbackReceiver> {
  const r = await startCallbackReceiver(respond);
  receivers.push(r);
  return r;
}

/** The receiver's side of the signature: HMAC-SHA256 of the raw body with the shared secret. */
function verified(secret: string, r: ReceivedCallback): boolean {
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(r.body).digest("hex")}`);
  const got = Buffer.from(r.headers["x-service-signature"] ?? "");
  return got.length === expected.length && timingSafeEqual(got, expected);
}

const byEvent = (received: ReceivedCallback[]) => {
  const groups = new Map<string, ReceivedCallback[]>();
  for (const r of received) groups.set(r.headers["x-service-event-id"]!, [...(groups.get(r.headers["x-service-event-id"]!) ?? []), r]);
  return groups;
};

describe("job callbacks", () => {
  it("posts a signed job.updated for every status change, which the receiver verifies", async () => {
    const r = await receiver();
    const secret = randomSecret();
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c, { callback_url: r.url, callback_secret: secret });
    const jobId = lease.body.data.job_id;
    await waitJob(stack, c, jobId, (j) => j.status === "succeeded" && j.callback.state === "delivered");
    await eventually(
      "two callbacks",
      async () => r.received.length,
      (n) => n >= 2,
    );
    expect(r.received).toHaveLength(2);
    const bodies = r.received.map((x) => JSON.parse(x.body));
    expect(bodies.map((b) => b.job.status)).toEqual(["running", "succeeded"]);
    for (const [i, x] of r.received.entries()) {
      expect(verified(secret, x)).toBe(true);
      expect(verified(`${secret}x`, x)).toBe(false);
      expect(x.headers["content-type"]).toMatch(/application\/json/);
      expect(x.headers["x-service-event-id"]).toBe(bodies[i].event_id);
      expect(bodies[i]).toMatchObject({ event: "job.updated", job: { id: jobId, type: "tron.energy_lease" } });
      expect(Date.parse(bodies[i].sent_at)).not.toBeNaN();
      expect(x.body).not.toContain(secret);
    }
    expect(bodies[1].job.result).toMatchObject({ dry_run: false });
    expect(new Set(bodies.map((b) => b.event_id)).size).toBe(2);
    const job = await waitJob(stack, c, jobId, (j) => j.callback.state === "delivered");
    expect(job.callback).toEqual({ state: "delivered", attempts: 1, last_status: 200 });
    // The secret is sealed at rest: neither its text nor its bytes are in the database.
    const rows = await stack.sql<{ secret_ciphertext: Buffer; secret_key_id: string }>(
      "jobs",
      "SELECT secret_ciphertext, secret_key_id FROM job_callback_targets WHERE job_id = $1",
      [jobId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.secret_ciphertext.includes(Buffer.from(secret))).toBe(false);
    const dump = await stack.sql("jobs", "SELECT j.*, t.url FROM jobs j JOIN job_callback_targets t ON t.job_id = j.id WHERE j.id = $1", [jobId]);
    expect(JSON.stringify(dump)).not.toContain(secret);
    const audit = await stack.sql("jobs", "SELECT data FROM audit_events WHERE data->>'job_id' = $1", [jobId]);
    expect(JSON.stringify(audit)).not.toContain(secret);
    // Nor in any log line of any process, nor in the job views.
    for (const service of ["edge", "ledger", "jobs"] as const) expect(JSON.stringify(stack.logs(service))).not.toContain(secret);
    expect(JSON.stringify(job)).not.toContain(secret);
    const metrics = await (await fetch(stack.metricsUrl("jobs"))).text();
    expect(metrics).toMatch(/callback_attempts_total\{[^}]*state="delivered"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/job_steps_total\{[^}]*outcome="done"[^}]*\} [1-9]/);
  });

  it("retries a receiver that fails three times: four attempts of one event id, then delivered", async () => {
    const r = await receiver((n) => (n <= 3 ? 500 : 200));
    const secret = randomSecret();
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c, { callback_url: r.url, callback_secret: secret });
    await waitJob(stack, c, lease.body.data.job_id, (j) => j.status === "succeeded" && j.callback.state === "delivered");
    await eventually(
      "both events delivered",
      async () => [...byEvent(r.received).values()].filter((g) => g.some((x) => x.status === 200)).length,
      (n) => n === 2,
    );
    const groups = [...byEvent(r.received).values()];
    expect(groups.map((g) => g.length)).toEqual([4, 1]);
    const first = groups[0]!;
    expect(first.map((x) => x.status)).toEqual([500, 500, 500, 200]);
    expect(new Set(first.map((x) => JSON.parse(x.body).event_id)).size).toBe(1);
    expect(first.every((x) => verified(secret, x))).toBe(true);
    // Backoff: the wait before the 4th attempt is at least base × 4 × 0.5.
    expect(first[3]!.at - first[2]!.at).toBeGreaterThanOrEqual(BASE_DELAY_MS * 2);
  });

  it("gives up after 8 attempts per event and shows `exhausted` on the job", async () => {
    const r = await receiver(() => 503);
    const c = await leaseCustomer(stack, 10_000);
    const { lease } = await quoteAndLease(stack, c, { callback_url: r.url, callback_secret: randomSecret() });
    const jobId = lease.body.data.job_id;
    await eventually(
      "16 attempts",
      async () => r.received.length,
      (n) => n >= 16,
      60_000,
    );
    const job = await waitJob(stack, c, jobId, (j) => j.callback.state === "exhausted" && j.status === "succeeded", 60_000);
    expect(job.callback).toEqual({ state: "exhausted", attempts: 8, last_status: 503 });
    await new Promise((res) => setTimeout(res, BASE_DELAY_MS * 2 ** 8));
    const groups = [...byEvent(r.received).values()];
    expect(groups.map((g) => g.length)).toEqual([8, 8]);
    const gaps = groups[0]!.slice(1).map((x, i) => x.at - groups[0]![i]!.at);
    expect(gaps[6]!).toBeGreaterThan(gaps[0]!);
    const rows = await stack.sql<{ state: string; attempts: number }>("jobs", "SELECT state, attempts FROM job_callback_deliveries WHERE job_id = $1", [jobId]);
    expect(rows).toEqual([
      { state: "exhausted", attempts: 8 },
      { state: "exhausted", attempts: 8 },
    ]);
    // The money is settled whatever the callbacks do.
    expect((await ledgerInvariant(stack)).ok).toBe(true);
  });
});
