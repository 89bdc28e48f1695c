import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import { createClient, type Client } from "@gateway/grpc-kit";
import { ledgerV1 } from "@gateway/protos";
import { join } from "node:path";
import { call, freePort, newTenant, REPO_ROOT, ServiceProcess, signIn, startStack, type Stack } from "@gateway/testkit";
import { prng } from "./support/prng.js";
import { ledgerEventsOf } from "./support/published.js";

let stack: Stack;
let admin: string;
/** A second ledger replica on the same database: all coordination happens in PostgreSQL. */
let replica: ServiceProcess;
let clients: Client<typeof ledgerV1>[];

beforeAll(async () => {
  stack = await startStack({ services: ["ledger", "jobs"] });
  admin = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
  const port = await freePort();
  replica = new ServiceProcess("ledger-replica", join(REPO_ROOT, "apps", "ledger", "dist", "main.js"), {
    ...stack.process("ledger").env,
    GRPC_PORT: String(port),
    METRICS_PORT: "0",
  });
  replica.start();
  clients = [stack.address("ledger"), `127.0.0.1:${port}`].map((address) =>
    createClient(ledgerV1, address, { deadlineMs: 30_000, serviceToken: stack.serviceToken, tls: stack.tls }),
  );
  await eventually(
    () =>
      clients[1]!.GetBalance({ tenant_id: "warm-up" }).then(
        () => true,
        () => false,
      ),
    (ok) => ok,
    60_000,
  );
});

afterAll(async () => {
  for (const c of clients ?? []) c.close();
  await replica?.stop();
  replica?.close();
  await stack?.shutdown();
});

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

type Kind = "Credit" | "Reserve" | "Capture" | "Void";
type Op = { id: string; kind: Kind; request: Record<string, unknown> };
type Outcome = { ok: true; response: Record<string, any> } | { ok: false; code: string };

/** SQL sums over the ledger's own database, independent of the service's code. */
async function sqlSums() {
  const perTenant = await stack.sql<{
    tenant_id: string;
    available: string;
    held: string;
    j_available: string;
    j_held: string;
    credits: string;
    captured: string;
  }>(
    "ledger",
    `SELECT a.tenant_id, a.available::text, a.held::text,
            (SELECT coalesce(sum(e.units), 0) FROM entries e JOIN transfers t ON t.id = e.transfer_id WHERE t.tenant_id = a.tenant_id AND e.account = 'available')::text AS j_available,
            (SELECT coalesce(sum(e.units), 0) FROM entries e JOIN transfers t ON t.id = e.transfer_id WHERE t.tenant_id = a.tenant_id AND e.account = 'held')::text AS j_held,
            (SELECT coalesce(sum(units), 0) FROM transfers WHERE tenant_id = a.tenant_id AND kind = 'credit')::text AS credits,
            (SELECT coalesce(sum(e.units), 0) FROM entries e JOIN transfers t ON t.id = e.transfer_id WHERE t.tenant_id = a.tenant_id AND e.account = 'revenue')::text AS captured
     FROM accounts a ORDER BY a.tenant_id`,
  );
  const [journal] = await stack.sql<{ total: string; unbalanced: number }>(
    "ledger",
    `SELECT (SELECT coalesce(sum(units), 0) FROM entries)::text AS total,
            (SELECT count(*)::int FROM (SELECT transfer_id FROM entries GROUP BY transfer_id HAVING sum(units) <> 0) x) AS unbalanced`,
  );
  return { perTenant, journal: journal! };
}

describe("ledger under concurrency, retries and two replicas", () => {
  it("keeps credits − captured = available + held for every tenant, tells every caller the truth, and balances the journal", async () => {
    const seed = Number(process.env.LEDGER_TEST_SEED ?? Date.now() % 1_000_000);
    const random = prng(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
    const tenants = Array.from({ length: 12 }, (_, i) => `conc-${seed}-${i}`);
    const ops = new Map<string, Op & { outcomes: Outcome[] }>();
    const holds: { holdId: string; units: number }[] = [];
    let n = 0;

    async function send(op: Op, via = pick(clients)): Promise<Outcome> {
      const fn = via[op.kind] as (req: Record<string, unknown>) => Promise<Record<string, any>>;
      let outcome: Outcome;
      try {
        outcome = { ok: true, response: await fn(op.request) };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        outcome = { ok: false, code: err.code };
      }
      if (!ops.has(op.id)) ops.set(op.id, { ...op, outcomes: [] });
      ops.get(op.id)!.outcomes.push(outcome);
      if (outcome.ok && op.kind === "Reserve" && !outcome.response.replayed) holds.push({ holdId: outcome.response.hold_id, units: Number(op.request.units) });
      return outcome;
    }

    function next(): { op: Op; copies: number; conflicting?: Op } {
      const roll = random();
      const tenant = pick(tenants);
      const id = `c${seed}:${++n}`;
      if (roll < 0.12) {
        return {
          op: {
            id,
            kind: "Credit",
            request: { operation_id: id, tenant_id: tenant, units: String(1 + Math.floor(random() * 4_000)), reason: "random top-up" },
          },
          copies: 1,
        };
      }
      if (roll < 0.45 || holds.length === 0) {
        const copies = random() < 0.25 ? 3 : 1;
        return {
          op: { id, kind: "Reserve", request: { operation_id: id, tenant_id: tenant, units: String(1 + Math.floor(random() * 2_500)), ttl_seconds: 900 } },
          copies,
        };
      }
      if (roll < 0.65) {
        const hold = pick(holds);
        const units = random() < 0.08 ? hold.units + 1 : Math.floor(random() * (hold.units + 1));
        return { op: { id, kind: "Capture", request: { operation_id: id, hold_id: hold.holdId, units: String(units) } }, copies: random() < 0.25 ? 3 : 1 };
      }
      if (roll < 0.8) {
        const hold = pick(holds);
        return { op: { id, kind: "Void", request: { operation_id: id, hold_id: hold.holdId } }, copies: random() < 0.25 ? 3 : 1 };
      }
      // A retry of an earlier operation; now and then one of a stored operation with
      // other parameters, which must be a conflict.
      const earlier = pick([...ops.values()]);
      const stored = [...ops.values()].filter((o) => o.kind !== "Void" && o.outcomes.some((x) => x.ok));
      if (random() < 0.15 && stored.length > 0) {
        const victim = pick(stored);
        const request = { ...victim.request, units: String(Number(victim.request.units) + 1) };
        return { op: victim, copies: 0, conflicting: { ...victim, request } };
      }
      return { op: earlier, copies: random() < 0.3 ? 2 : 1 };
    }

    // Funds first, then 40 workers draw random operations until 600 have been sent.
    for (const tenant of tenants)
      await send({ id: `fund:${tenant}`, kind: "Credit", request: { operation_id: `fund:${tenant}`, tenant_id: tenant, units: "8000", reason: "funds" } });
    const conflicts: Outcome[] = [];
    let sent = 0;
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        while (sent < 600) {
          const { op, copies, conflicting } = next();
          sent += Math.max(1, copies);
          if (conflicting) {
            const via = pick(clients);
            const fn = via[conflicting.kind] as (req: Record<string, unknown>) => Promise<unknown>;
            conflicts.push(
              await fn(conflicting.request).then(
                (response) => ({ ok: true, response }) as Outcome,
                (err: AppError) => ({ ok: false, code: err.code }) as Outcome,
              ),
            );
            continue;
          }
          await Promise.all(Array.from({ length: copies }, () => send(op)));
        }
      }),
    );

    // A reservation no tenant can cover: the refusal path is exercised whatever the random draw.
    await send({
      id: `c${seed}:toolarge`,
      kind: "Reserve",
      request: { operation_id: `c${seed}:toolarge`, tenant_id: tenants[0]!, units: "1000000000000", ttl_seconds: 900 },
    });

    // Every refusal is one the contract names; a conflicting retry is always a conflict.
    const codes = new Set([...ops.values()].flatMap((o) => o.outcomes.flatMap((x) => (x.ok ? [] : [x.code]))));
    for (const code of codes) expect(["insufficient_balance", "conflict", "invalid_request"]).toContain(code);
    expect(conflicts.length).toBeGreaterThan(0);
    for (const c of conflicts) expect(c).toEqual({ ok: false, code: "conflict" });

    // Every caller of one operation id was told the same thing: one first result, identical replays.
    const model = new Map(tenants.map((t) => [t, { credits: 0n, captured: 0n }]));
    const holdState = new Map<string, { tenant: string; units: bigint; settledBy?: string; captured: bigint }>();
    const successes = [...ops.values()].filter((o) => o.outcomes.some((x) => x.ok));
    for (const op of successes) {
      const oks = op.outcomes.flatMap((x) => (x.ok ? [x.response] : []));
      expect(oks.filter((r) => !r.replayed).length, op.id).toBeLessThanOrEqual(1);
      const [first] = oks;
      for (const r of oks) expect({ ...r, replayed: false }, op.id).toEqual({ ...first, replayed: false });
    }
    // The callers' view, replayed into a model: each successful operation id moved money once.
    for (const op of successes.filter((o) => o.kind === "Credit" || o.kind === "Reserve")) {
      const r = op.outcomes.find((x) => x.ok)! as { ok: true; response: Record<string, any> };
      if (op.kind === "Credit") model.get(op.request.tenant_id as string)!.credits += BigInt(op.request.units as string);
      else holdState.set(r.response.hold_id, { tenant: op.request.tenant_id as string, units: BigInt(op.request.units as string), captured: 0n });
    }
    for (const op of successes.filter((o) => o.kind === "Capture" || o.kind === "Void")) {
      const hold = holdState.get(op.request.hold_id as string)!;
      expect(hold.settledBy, `hold ${op.request.hold_id} settled by ${hold.settledBy} and ${op.id}`).toBeUndefined();
      hold.settledBy = op.id;
      if (op.kind === "Capture") {
        hold.captured = BigInt(op.request.units as string);
        model.get(hold.tenant)!.captured += hold.captured;
      }
    }
    const settledCount = [...holdState.values()].filter((h) => h.settledBy).length;
    const tally: Record<string, number> = {};
    for (const o of ops.values())
      for (const x of o.outcomes)
        tally[`${o.kind}:${x.ok ? (x.response.replayed ? "replayed" : "ok") : x.code}`] =
          (tally[`${o.kind}:${x.ok ? (x.response.replayed ? "replayed" : "ok") : x.code}`] ?? 0) + 1;
    console.log(`seed ${seed} (LEDGER_TEST_SEED repeats a run): ${JSON.stringify(tally)}`);
    // The run exercised every path: refusals, replays (also of concurrent duplicates) and settlements.
    for (const path of [
      "Reserve:insufficient_balance",
      "Reserve:replayed",
      "Capture:ok",
      "Capture:replayed",
      "Capture:conflict",
      "Void:ok",
      "Void:replayed",
      "Credit:replayed",
    ]) {
      expect(tally[path] ?? 0, `${path} in ${JSON.stringify(tally)}`).toBeGreaterThan(0);
    }
    expect(settledCount).toBeGreaterThan(20);
    expect(holdState.size - settledCount).toBeGreaterThan(5);

    // The service, the SQL sums and the callers' model agree for every tenant.
    const report = await clients[0]!.CheckInvariant({ all_tenants: true });
    expect(report).toMatchObject({ ok: true, journal_sum: "0", unbalanced_transfers: "0" });
    const { perTenant, journal } = await sqlSums();
    expect(journal).toMatchObject({ total: "0", unbalanced: 0 });
    for (const tenant of tenants) {
      const open = [...holdState.values()].filter((h) => h.tenant === tenant && !h.settledBy).reduce((s, h) => s + h.units, 0n);
      const { credits, captured } = model.get(tenant)!;
      const expected = { available: (credits - captured - open).toString(), held: open.toString() };
      const row = perTenant.find((r) => r.tenant_id === tenant)!;
      expect({ available: row.available, held: row.held }, tenant).toEqual(expected);
      expect({ available: row.j_available, held: row.j_held, credits: row.credits, captured: row.captured }, tenant).toEqual({
        ...expected,
        credits: credits.toString(),
        captured: captured.toString(),
      });
      expect(
        report.tenants.find((t) => t.tenant_id === tenant),
        tenant,
      ).toMatchObject({
        ok: true,
        credits: credits.toString(),
        captured: captured.toString(),
        available: expected.available,
        held: expected.held,
      });
      const balance = await pick(clients).GetBalance({ tenant_id: tenant });
      expect(balance).toMatchObject({ available_units: expected.available, reserved_units: expected.held });
    }

    // Every movement was published exactly once, whichever replica's relay sent it (the stream:
    // the audit trail keeps no copy of the ledger's hold movements, docs/decisions/0330).
    const [movements] = await stack.sql<{ n: number }>("ledger", "SELECT count(*)::int AS n FROM transfers WHERE tenant_id LIKE $1", [`conc-${seed}-%`]);
    const published = await eventually(
      () => ledgerEventsOf(stack, (id) => id.startsWith(`conc-${seed}-`)),
      (r) => r.n >= movements!.n,
      30_000,
    );
    expect(published, `seed ${seed}`).toEqual({ n: movements!.n, distinct: movements!.n });
  });
});

describe("a crash between reserve and capture", () => {
  it("leaves the hold, which can be voided exactly once after a restart", async () => {
    const [client] = clients as [Client<typeof ledgerV1>];
    const tenant = `crash-${Date.now()}`;
    await client.Credit({ operation_id: `${tenant}:fund`, tenant_id: tenant, units: "1000", reason: "funds" });
    const hold = await client.Reserve({ operation_id: `${tenant}:reserve`, tenant_id: tenant, units: "400", ttl_seconds: 900 });

    await replica.stop("SIGKILL");
    await stack.stop("ledger", "SIGKILL");
    await stack.start("ledger");

    expect(await client.GetHold({ hold_id: hold.hold_id })).toMatchObject({ status: "open", units: "400" });
    expect(await client.GetBalance({ tenant_id: tenant })).toMatchObject({ available_units: "600", reserved_units: "400" });
    const voided = await client.Void({ operation_id: `${tenant}:void`, hold_id: hold.hold_id, reason: "managed-ai gave up after the crash" });
    expect(voided).toMatchObject({
      replayed: false,
      hold: { status: "voided", released_units: "400" },
      balance: { available_units: "1000", reserved_units: "0" },
    });

    const again = await client.Void({ operation_id: `${tenant}:void-2`, hold_id: hold.hold_id }).catch((e: AppError) => e);
    expect(again).toMatchObject({ code: "conflict" });
    const capture = await client.Capture({ operation_id: `${tenant}:capture`, hold_id: hold.hold_id, units: "1" }).catch((e: AppError) => e);
    expect(capture).toMatchObject({ code: "conflict" });
    expect(await client.Void({ operation_id: `${tenant}:void`, hold_id: hold.hold_id, reason: "managed-ai gave up after the crash" })).toEqual({
      ...voided,
      replayed: true,
    });

    expect(await client.GetBalance({ tenant_id: tenant })).toMatchObject({ available_units: "1000", reserved_units: "0" });
    expect(await client.CheckInvariant({ tenant_id: tenant })).toMatchObject({
      ok: true,
      tenants: [{ credits: "1000", captured: "0", available: "1000", held: "0" }],
    });
  });

  it("loses nothing when the ledger dies in the middle of a burst: retries with the same ids settle every outcome", async () => {
    const [client] = clients as [Client<typeof ledgerV1>];
    const tenant = `burst-${Date.now()}`;
    await client.Credit({ operation_id: `${tenant}:fund`, tenant_id: tenant, units: "100000", reason: "funds" });
    const requests = Array.from({ length: 200 }, (_, i) => ({ operation_id: `${tenant}:r${i}`, tenant_id: tenant, units: String(100 + i), ttl_seconds: 900 }));
    // The ledger is killed as soon as the first answer arrives, with the other calls still under way
    // (the ledger commits what queued up behind the first ones as a batch: they are in flight together).
    let answered = 0;
    let killed: Promise<unknown> | undefined;
    const first = Promise.allSettled(
      requests.map((r) =>
        client.Reserve(r).finally(() => {
          if (++answered === 1) killed = stack.stop("ledger", "SIGKILL");
        }),
      ),
    );
    const outcomes = await first;
    await killed;
    const lost = outcomes.filter((o) => o.status === "rejected");
    expect(lost.length, "calls cut off by the crash").toBeGreaterThan(0);
    for (const o of lost) expect((o as PromiseRejectedResult).reason).toMatchObject({ code: "unavailable" });
    await stack.start("ledger");

    // Whatever the first attempt did, a retry with the same id settles it: the stored hold, or a new one.
    const retried = await Promise.all(requests.map((r) => client.Reserve(r)));
    outcomes.forEach((o, i) => {
      if (o.status === "fulfilled") expect(retried[i]).toEqual({ ...o.value, replayed: true });
    });
    const committedUnseen = retried.filter((r, i) => r.replayed && outcomes[i]!.status === "rejected").length;
    console.log(`burst: ${outcomes.length - lost.length} answered before the crash, ${lost.length} cut off (${committedUnseen} of them had committed)`);
    expect(new Set(retried.map((r) => r.hold_id)).size).toBe(200);
    const total = requests.reduce((s, r) => s + Number(r.units), 0);
    expect(await client.GetBalance({ tenant_id: tenant })).toMatchObject({ available_units: String(100_000 - total), reserved_units: String(total) });
    const [holds] = await stack.sql<{ n: number }>("ledger", "SELECT count(*)::int AS n FROM holds WHERE tenant_id = $1", [tenant]);
    expect(holds!.n).toBe(200);

    await Promise.all(retried.map((r, i) => client.Void({ operation_id: `${tenant}:v${i}`, hold_id: r.hold_id })));
    expect(await client.CheckInvariant({ tenant_id: tenant })).toMatchObject({ ok: true, tenants: [{ available: "100000", held: "0" }] });
    // Events committed before the crash leave after the restart (the relay tails the
    // journal from its checkpoint), and are published exactly once each.
    await eventually(
      () =>
        stack.sql<{ n: number }>(
          "ledger",
          "SELECT count(*)::int AS n FROM transfers WHERE seq > (SELECT position FROM relay_checkpoints WHERE name = 'ledger_events')",
        ),
      (rows) => rows[0]!.n === 0,
    );
    const [movements] = await stack.sql<{ n: number }>("ledger", "SELECT count(*)::int AS n FROM transfers WHERE tenant_id = $1", [tenant]);
    const published = await eventually(
      () => ledgerEventsOf(stack, (id) => id === tenant),
      (r) => r.n >= movements!.n,
      30_000,
    );
    expect(published).toEqual({ n: movements!.n, distinct: movements!.n });
  });
});

describe("balance over HTTP (CONTRACT.md section 4)", () => {
  it("credits once per Idempotency-Key and shows available and reserved units to operators and the tenant", async () => {
    const tenant = await newTenant(stack.edgeUrl, "ledger-http");
    const credit = (units: number, key: string, reason = "top-up") =>
      call(stack.edgeUrl, "POST", `/ops/ledger/tenants/${tenant.tenantId}/credits`, {
        token: admin,
        body: { units, reason },
        headers: { "Idempotency-Key": key },
      });
    const first = await credit(5_000, "topup-1");
    expect(first.status).toBe(201);
    expect(first.body.data).toEqual({ entry_id: expect.stringMatching(/^trf_/), available_units: 5_000 });

    await clients[0]!.Reserve({ operation_id: `http:${tenant.tenantId}:r`, tenant_id: tenant.tenantId, units: "1200", ttl_seconds: 900 });
    const repeat = await credit(5_000, "topup-1");
    expect(repeat).toMatchObject({ status: 201, body: { data: first.body.data } });
    expect((await credit(5_001, "topup-1")).status).toBe(409);

    const mine = await call(stack.edgeUrl, "GET", "/console/balance", { token: tenant.token });
    expect(mine.body).toEqual({ data: { currency: "USD", available_units: 3_800, reserved_units: 1_200 } });
    const ops = await call(stack.edgeUrl, "GET", `/ops/ledger/tenants/${tenant.tenantId}`, { token: admin });
    expect(ops.body).toEqual({ data: { tenant_id: tenant.tenantId, currency: "USD", available_units: 3_800, reserved_units: 1_200 } });
    expect((await call(stack.edgeUrl, "GET", `/ops/ledger/tenants/${tenant.tenantId}`, { token: tenant.token })).status).toBe(403);
    expect((await credit(0, "topup-2")).status).toBe(400);
    // The header's schema (declared on the route, decision 0201): a 400 in the contract's shape, nothing credited.
    const badKey = await credit(5_000, "bad key!");
    expect(badKey.status).toBe(400);
    expect(badKey.body).toMatchObject({ error: "invalid_request", message: expect.stringMatching(/Idempotency-Key/) });
    expect((await call(stack.edgeUrl, "GET", "/console/balance", { token: tenant.token })).body.data.available_units).toBe(3_800);
  });
});

describe("kill -9 of the ledger and of the audit consumer at random points of reserve → capture / void", () => {
  it("settles, voids or leaves releasable every hold exactly once, keeps the invariant, and publishes every movement exactly once", async () => {
    const seed = Number(process.env.LEDGER_TEST_SEED ?? Date.now() % 1_000_000);
    const random = prng(seed);
    const [client] = clients as [Client<typeof ledgerV1>];
    const tenant = `kill-${seed}`;
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await client.Credit({ operation_id: `${tenant}:fund`, tenant_id: tenant, units: "100000000", reason: "funds" });
    const pairs = Array.from({ length: 160 }, (_, i) => {
      const units = 100 + Math.floor(random() * 900);
      const roll = random();
      return { i, units, settle: roll < 0.55 ? "capture" : roll < 0.8 ? "void" : "none", charge: Math.floor(random() * (units + 1)) } as const;
    });
    /** One attempt of a pair, as managed-ai makes it: reserve, then capture or void with ids derived from the record. */
    async function attempt(p: (typeof pairs)[number]): Promise<string> {
      const r = await client.Reserve({ operation_id: `${tenant}:r${p.i}`, tenant_id: tenant, units: String(p.units), ttl_seconds: 900 });
      if (p.settle === "capture") await client.Capture({ operation_id: `${tenant}:c${p.i}`, hold_id: r.hold_id, units: String(p.charge) });
      if (p.settle === "void") await client.Void({ operation_id: `${tenant}:v${p.i}`, hold_id: r.hold_id });
      return r.hold_id;
    }
    async function retry<T>(fn: () => Promise<T>): Promise<T> {
      const until = Date.now() + 90_000;
      for (;;) {
        try {
          return await fn();
        } catch (err) {
          if (!(err instanceof AppError) || err.code !== "unavailable" || Date.now() > until) throw err;
          await sleep(200);
        }
      }
    }

    // 16 callers go through the pairs once while the ledger dies twice (SIGKILL) at random
    // moments, and the audit consumer once; calls cut off by a crash are left as they are.
    let next = 0;
    let cutOff = 0;
    const callers = Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < pairs.length)
          await attempt(pairs[next++]!).catch(() => {
            cutOff++;
          });
      }),
    );
    // Killed when the callers have got to random points of the list, so calls are under way.
    for (const at of [20 + Math.floor(random() * 40), 90 + Math.floor(random() * 40)]) {
      while (next < at) await sleep(2);
      await stack.stop("ledger", "SIGKILL");
      if (at > 80) await stack.stop("jobs", "SIGKILL");
      await stack.start("ledger");
    }
    await callers;
    await stack.start("jobs");
    console.log(`kill -9 (seed ${seed}): ${cutOff} of ${pairs.length} pairs cut off by the crashes`);
    expect(cutOff).toBeGreaterThan(0);

    // The callers retry with the same ids (replay or first run); holds the plan leaves open
    // are released once by an operator; a second release of any hold is refused.
    const holdIds = await Promise.all(pairs.map((p) => retry(() => attempt(p))));
    expect(new Set(holdIds).size).toBe(pairs.length);
    const released = await Promise.all(
      pairs.map((p, i) =>
        p.settle === "none" ? retry(() => client.Void({ operation_id: `${tenant}:release${p.i}`, hold_id: holdIds[i]!, reason: "operator release" })) : null,
      ),
    );
    for (const r of released) if (r) expect(r.replayed).toBe(false);
    for (const [i, p] of pairs.entries()) {
      const hold = await client.GetHold({ hold_id: holdIds[i]! });
      expect(hold, `pair ${p.i} (seed ${seed})`).toMatchObject({
        status: p.settle === "capture" ? "captured" : "voided",
        units: String(p.units),
        captured_units: p.settle === "capture" ? String(p.charge) : "0",
      });
      const again = await client.Void({ operation_id: `${tenant}:again${p.i}`, hold_id: holdIds[i]! }).catch((e: AppError) => e);
      expect(again).toMatchObject({ code: "conflict" });
    }
    const charged = pairs.reduce((s, p) => s + (p.settle === "capture" ? p.charge : 0), 0);
    expect(await client.GetBalance({ tenant_id: tenant })).toMatchObject({ available_units: String(100_000_000 - charged), reserved_units: "0" });
    expect(await client.CheckInvariant({ tenant_id: tenant })).toMatchObject({ ok: true, tenants: [{ captured: String(charged), held: "0" }] });

    // One transfer per movement, each published exactly once across the relay's crashes; the
    // credit (an operator's act, the one ledger event the audit trail stores) reached the
    // audit trail once across the consumer's.
    const [movements] = await stack.sql<{ n: number }>("ledger", "SELECT count(*)::int AS n FROM transfers WHERE tenant_id = $1", [tenant]);
    expect(movements!.n).toBe(1 + 2 * pairs.length);
    const published = await eventually(
      () => ledgerEventsOf(stack, (id) => id === tenant),
      (r) => r.n >= movements!.n,
      60_000,
    );
    expect(published, `seed ${seed}`).toEqual({ n: movements!.n, distinct: movements!.n });
    const audited = await eventually(
      () => stack.sql<{ n: number }>("jobs", "SELECT count(*)::int AS n FROM audit_events WHERE type LIKE 'ledger.%' AND data->>'tenant_id' = $1", [tenant]),
      (rows) => rows[0]!.n >= 1,
      60_000,
    );
    await sleep(500);
    expect(audited[0]!.n, `seed ${seed}`).toBe(1);
  });
});
