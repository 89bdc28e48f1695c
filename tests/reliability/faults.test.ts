import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockProvider, type MockProvider } from "@gateway/mock-provider";
import { createClient } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { call, signIn, startStack, type ServiceName, type Stack } from "@gateway/testkit";
import { customer, managedModel, mockProvider, operator, PROVIDER_KEY, upstream, type Customer, type Operator } from "../src/support/managed-ai.js";
import { settledBooks } from "../src/support/money-audit.js";
import { LISTENER_LEAK, rawRequest, type RawOutcome } from "../src/support/raw-client.js";
import { startPrivateNats, startPrivatePostgres, type PrivateNats, type PrivatePostgres } from "./support/private-infra.js";
import { PROFILE, saveFigures } from "./support/report.js";
import { eventsCheck } from "./support/events-check.js";
import { findSecrets } from "./support/secrets.js";
import { prng } from "../src/support/prng.js";

/*
 * Issue 10's fault suite: a steady mixed load on two edges and two managed-ai
 * replicas while, in turn, processes are killed with -9, NATS and PostgreSQL
 * (private instances) restart and the provider pauses. Then, after the
 * reconciler's turn, the books must be exact.
 */

const SETTINGS = {
  ci: { workers: 6, steadyMs: 2_000, downMs: 1_500 },
  long: { workers: 16, steadyMs: 12_000, downMs: 5_000 },
}[PROFILE];

let pgServer: PrivatePostgres;
let nats: PrivateNats;
let stack: Stack;
let provider: MockProvider;
let broken: MockProvider;
let op: Operator;
const customers: Customer[] = [];
let edges: string[] = [];
const planned: Partial<Record<ServiceName, number>> = {};
const secrets: string[] = [PROVIDER_KEY];
const started = Date.now();

beforeAll(async () => {
  pgServer = await startPrivatePostgres();
  nats = await startPrivateNats();
  provider = await mockProvider();
  broken = await startMockProvider({ apiKey: PROVIDER_KEY });
  broken.set({ failStatus: 500 });
  const managedAiEnv = {
    RECONCILE_INTERVAL_MS: "1000",
    RECONCILE_RESERVED_AFTER_SECONDS: "20",
    RECONCILE_SETTLED_AFTER_SECONDS: "5",
    LEDGER_DEADLINE_MS: "1500",
    DATABASE_POOL_SIZE: "6",
  };
  stack = await startStack({
    databaseUrl: pgServer.url,
    natsUrl: nats.url,
    readyTimeoutMs: 120_000,
    env: {
      "managed-ai": managedAiEnv,
      edge: { DATABASE_POOL_SIZE: "6" },
      ledger: { DATABASE_POOL_SIZE: "6" },
      jobs: { DATABASE_POOL_SIZE: "4" },
      messaging: { DATABASE_POOL_SIZE: "2" },
      files: { DATABASE_POOL_SIZE: "2" },
    },
  });
  const managedAi2 = await stack.addReplica("managed-ai", "managed-ai-2");
  edges = [stack.edgeUrl, await stack.addEdge("edge-2", { MANAGED_AI_GRPC_URL: managedAi2 })];
  secrets.push(stack.admin.password, stack.jwtSecret);
  op = await operator(stack);
  secrets.push(op.token);
  await upstream(stack, op, provider, "mock");
  must(
    await call(stack.edgeUrl, "PUT", "/ops/ai/upstreams/broken", {
      token: op.token,
      body: { provider: "openai", base_url: broken.url, api_key: PROVIDER_KEY },
    }),
    200,
  );
  await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 });
  await managedModel(stack, op, { alias: "broken", upstreamId: "broken", inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 });
  for (let i = 0; i < 3; i++) {
    const c = await customer(stack, op, { units: 20_000_000, alias: "ai", defaultModel: "small", config: { models: ["small", "broken"] } });
    customers.push(c);
    secrets.push(c.key, c.token, c.password);
  }
}, 300_000);

afterAll(async () => {
  await stack?.shutdown().catch(() => undefined);
  await provider?.close();
  await broken?.close();
  await nats?.close();
  await pgServer?.close();
});

function must(res: { status: number; body: unknown }, status: number) {
  if (res.status !== status) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
}

const chatBody = (model: string, stream: boolean) =>
  JSON.stringify({
    model,
    messages: [{ role: "user", content: "Tell me about holds and captures, in some detail please." }],
    max_tokens: 40,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });

const chatRequest = (c: Customer, body: string, extra: Record<string, string> = {}) => ({
  method: "POST",
  path: "/v1/apps/ai/ai/v1/chat/completions",
  headers: { "content-type": "application/json", "x-api-key": c.key, ...extra },
  body,
});

describe("replicas share every store exactly", () => {
  it("key limits, Idempotency-Keys and sessions hold across two edges and two managed-ai replicas", async () => {
    // A per-minute rate of 10, spent through both edges at once: exactly 10 pass.
    const limited = await customer(stack, op, { units: 1_000_000, alias: "lim", defaultModel: "small", keyPolicy: { rate_limit_per_minute: 10 } });
    secrets.push(limited.key, limited.token);
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) => fetch(`${edges[i % 2]}/v1/apps/ai/lim/v1/models`, { headers: { "x-api-key": limited.key } }).then((r) => r.status)),
    );
    expect(answers.filter((s) => s === 200)).toHaveLength(10);
    expect(answers.filter((s) => s === 429)).toHaveLength(14);

    // One Idempotency-Key sent to both edges (hence both managed-ai replicas) at once: one answer, one 409.
    const c = customers[0]!;
    for (let i = 0; i < 5; i++) {
      const key = `replica-${i}-${Date.now()}`;
      const both = await Promise.all(edges.map((e) => rawRequest(e, chatRequest(c, chatBody("small", false), { "idempotency-key": key }), Infinity)));
      expect(both.map((o) => o.status).sort()).toEqual([200, 409]);
    }

    // A session signed in on one edge works on the other; a logout on the other ends it on both at once.
    const token = await signIn(edges[0]!, c.email, c.password);
    expect((await call(edges[1]!, "GET", "/console/me", { token })).status).toBe(200);
    expect((await call(edges[1]!, "POST", "/auth/logout", { token })).status).toBe(204);
    expect((await call(edges[0]!, "GET", "/console/me", { token })).status).toBe(401);
  }, 120_000);
});

describe(`load with faults (profile ${PROFILE})`, () => {
  it("loses nothing: no unplanned exit, every record final and agreeing with the ledger, events exactly once", async () => {
    const random = prng(10);
    const outcomes: Record<string, number> = {};
    let requests = 0;
    let idempotencyViolations = 0;
    let stop = false;
    const count = (kind: string, o: RawOutcome) => {
      requests++;
      const key = `${kind} ${o.status ?? (o.completed ? "closed" : "cut/refused")}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    };
    const worker = async (n: number) => {
      let i = 0;
      while (!stop) {
        i++;
        const c = customers[n % customers.length]!;
        const edge = edges[Math.floor(random() * edges.length)]!;
        const r = random();
        if (r < 0.35) count("json", await rawRequest(edge, chatRequest(c, chatBody("small", false)), Infinity, { timeoutMs: 20_000 }));
        else if (r < 0.55) count("stream", await rawRequest(edge, chatRequest(c, chatBody("small", true)), Infinity, { timeoutMs: 20_000 }));
        else if (r < 0.75) {
          const cut = random() < 0.5 ? { bytes: Math.floor(random() * 2_000) } : { bytes: Infinity, ms: Math.floor(random() * 80) };
          count(
            "stream-cut",
            await rawRequest(edge, chatRequest(c, chatBody("small", true)), cut.bytes, {
              timeoutMs: 20_000,
              ...(cut.ms !== undefined ? { cutAfterMs: cut.ms } : {}),
            }),
          );
        } else if (r < 0.85) count("failing-provider", await rawRequest(edge, chatRequest(c, chatBody("broken", false)), Infinity, { timeoutMs: 20_000 }));
        else {
          // The same Idempotency-Key again, on the other edge: never a second answer.
          const key = `w${n}-${i}-${Date.now()}`;
          const first = await rawRequest(edge, chatRequest(c, chatBody("small", false), { "idempotency-key": key }), Infinity, { timeoutMs: 20_000 });
          const other = edges[(edges.indexOf(edge) + 1) % edges.length]!;
          const second = await rawRequest(other, chatRequest(c, chatBody("small", false), { "idempotency-key": key }), Infinity, { timeoutMs: 20_000 });
          count("idempotent", first);
          count("idempotent-retry", second);
          if (first.status === 200 && second.status === 200) idempotencyViolations++;
        }
      }
    };
    const workers = Array.from({ length: SETTINGS.workers }, (_, n) => worker(n));
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const faults: string[] = [];
    const kill = async (service: ServiceName) => {
      planned[service] = (planned[service] ?? 0) + 1;
      await stack.stop(service, "SIGKILL");
      await sleep(SETTINGS.downMs);
      await stack.start(service);
      faults.push(`kill -9 ${service}, down ${SETTINGS.downMs / 1000} s, restarted`);
    };

    await sleep(SETTINGS.steadyMs);
    for (const fault of [
      () => kill("edge"),
      () => kill("managed-ai"),
      () => kill("ledger"),
      () => kill("jobs"),
      () => kill("managed-ai-2"),
      async () => {
        await nats.restart(SETTINGS.downMs);
        faults.push(`NATS kill -9, down ${SETTINGS.downMs / 1000} s, restarted (JetStream store kept)`);
      },
      async () => {
        await pgServer.restart(SETTINGS.downMs);
        faults.push(`PostgreSQL stopped immediately (as in a crash), down ${SETTINGS.downMs / 1000} s, restarted`);
      },
      async () => {
        provider.set({ delayMs: SETTINGS.downMs * 2 });
        await sleep(SETTINGS.downMs);
        provider.set({ delayMs: undefined });
        faults.push(`provider paused (answers delayed ${(SETTINGS.downMs * 2) / 1000} s) for ${SETTINGS.downMs / 1000} s`);
      },
    ]) {
      await fault();
      await sleep(SETTINGS.steadyMs);
    }
    stop = true;
    await Promise.all(workers);

    // After the reconciler's turn: the books.
    const tenantIds = customers.map((c) => c.tenantId);
    const audit = await settledBooks(stack, tenantIds, 120_000);
    const ledger = createClient(ledgerV1, stack.address("ledger"), { deadlineMs: 10_000, serviceToken: stack.serviceToken, tls: stack.tls });
    let unitsLost = 0n;
    try {
      const global = await ledger.CheckInvariant({ all_tenants: true });
      if (!global.ok) audit.problems.push("the ledger's global invariant is broken");
      for (const c of customers) {
        const b = await ledger.GetBalance({ tenant_id: c.tenantId });
        const drop = 20_000_000n - BigInt(b.available_units) - BigInt(b.reserved_units);
        const [row] = await stack.sql<{ charged: string | null }>(
          "managed-ai",
          "SELECT sum(final_units)::text AS charged FROM usage_records WHERE tenant_id = $1 AND status = 'completed'",
          [c.tenantId],
        );
        const charged = BigInt(row?.charged ?? "0");
        unitsLost += drop > charged ? drop - charged : charged - drop;
      }
    } finally {
      ledger.close();
    }

    // Events: every outbox drained; each ledger movement and each record's reservation audited exactly once.
    const events = await eventsCheck(stack);

    // Processes: only the planned deaths; nothing fatal, uncaught or leaking listeners.
    const names = ["edge", "edge-2", "ledger", "managed-ai", "managed-ai-2", "jobs", "messaging", "files"] as ServiceName[];
    let unplannedDeaths = 0;
    let fatalLines = 0;
    for (const name of names) {
      const proc = stack.process(name);
      unplannedDeaths += Math.max(0, proc.exits.length - (planned[name] ?? 0)) + (proc.running ? 0 : 1);
      fatalLines += proc.lines.filter((l) => l.level === "fatal" || LISTENER_LEAK.test(String(l.raw ?? l.msg ?? ""))).length;
    }
    const found = await findSecrets(stack, names, secrets);

    const internalErrors = Object.entries(outcomes)
      .filter(([k]) => k.endsWith(" 500"))
      .reduce((n, [, v]) => n + v, 0);
    saveFigures("faults", {
      requests,
      internalErrors,
      byOutcome: outcomes,
      faults,
      unplannedDeaths,
      records: audit.records,
      recordsByStatus: audit.byStatus,
      waitingForOperator: audit.waiting,
      waitingForOperatorByCode: audit.waitingByCode,
      unitsCharged: audit.charged.toString(),
      unitsLost: unitsLost.toString(),
      holdProblems: audit.problems.length,
      idempotencyViolations,
      eventsLostOrDoubled: events.problems.length,
      fatalOrLeakLines: fatalLines,
      secretsFound: found.length,
      replicas: "two edges and two managed-ai replicas over one PostgreSQL, NATS and Redis",
      durationSeconds: Math.round((Date.now() - started) / 1000),
    });

    expect(requests).toBeGreaterThan(0);
    // Faults may make answers 502 or 503; a 500 is a bug (a failure nobody classified).
    expect(internalErrors, JSON.stringify(outcomes)).toBe(0);
    // Nothing with usage waits in review (settledBooks counts it as a problem, as any review
    // record whose code says the usage is known); a cut stream is finished and charged, so no
    // record may wait as client_disconnected (docs/decisions/0177): only a process killed
    // mid-call (interrupted) or the provider's own failures leave usage unknown.
    expect(audit.problems).toEqual([]);
    expect(audit.waitingByCode).not.toHaveProperty("client_disconnected");
    expect(unitsLost).toBe(0n);
    expect(idempotencyViolations).toBe(0);
    expect(events.problems).toEqual([]);
    for (const name of names) {
      const proc = stack.process(name);
      expect(proc.running, `${name}\n${proc.tail()}`).toBe(true);
      expect(proc.exits.length, `${name} exits ${JSON.stringify(proc.exits)}\n${proc.tail()}`).toBe(planned[name] ?? 0);
    }
    expect(fatalLines).toBe(0);
    expect(found).toEqual([]);
  }, 600_000);
});
