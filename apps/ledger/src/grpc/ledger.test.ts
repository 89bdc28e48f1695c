import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import { subjectsFor, type EventEnvelope } from "@gateway/events";
import { readEnvelopes } from "@gateway/events-runtime";
import { startLedgerProcess, type LedgerProcess } from "../testing/ledger-process.js";

let ledger: LedgerProcess;
beforeAll(async () => {
  ledger = await startLedgerProcess();
});
afterAll(async () => {
  await ledger?.close();
});

async function refusal(call: Promise<unknown>): Promise<AppError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

type Published = EventEnvelope & { data: Record<string, unknown> };

/** The ledger's events that `mine` picks, as published (batches unpacked), once `n` of them are on the stream. */
async function publishedOf(process: LedgerProcess, mine: (e: Published) => boolean, n: number): Promise<Published[]> {
  const pick = (seen: EventEnvelope[]) => (seen as Published[]).filter(mine);
  return pick(await readEnvelopes((await process.nats()).jetstream(), subjectsFor(process.namespace), { enough: (seen) => pick(seen).length >= n }));
}

describe("LedgerService over gRPC", () => {
  it("serves every operation, with int64 amounts as exact decimal strings", async () => {
    const { client } = ledger;
    const credit = await client.Credit({ operation_id: "g:credit", tenant_id: "g1", units: "9007199254740993", reason: "big top-up" });
    expect(credit).toMatchObject({ replayed: false, balance: { tenant_id: "g1", currency: "USD", available_units: "9007199254740993", reserved_units: "0" } });

    const r = await client.Reserve({ operation_id: "g:r1", tenant_id: "g1", units: "1000", ttl_seconds: 900 });
    expect(r).toMatchObject({ replayed: false, units: "1000", balance: { available_units: "9007199254739993", reserved_units: "1000" } });
    expect(r.hold_id).toMatch(/^hold_/);
    expect(r.entry_id).toMatch(/^trf_/);
    expect(Date.parse(r.expires_at)).toBeGreaterThan(Date.now() + 800_000);
    expect(await client.Reserve({ operation_id: "g:r1", tenant_id: "g1", units: "1000", ttl_seconds: 900 })).toEqual({ ...r, replayed: true });

    const hold = await client.GetHold({ hold_id: r.hold_id });
    expect(hold).toEqual({
      hold_id: r.hold_id,
      tenant_id: "g1",
      units: "1000",
      status: "open",
      captured_units: "0",
      released_units: "0",
      expires_at: r.expires_at,
      created_at: expect.stringMatching(/Z$/),
      settled_at: "",
      allotment: false,
    });

    const cap = await client.Capture({ operation_id: "g:c1", hold_id: r.hold_id, units: "123" });
    expect(cap).toMatchObject({
      replayed: false,
      hold: { status: "captured", captured_units: "123", released_units: "877", settled_at: expect.stringMatching(/Z$/) },
      balance: { available_units: "9007199254740870", reserved_units: "0" },
    });

    const r2 = await client.Reserve({ operation_id: "g:r2", tenant_id: "g1", units: "50", expires_at: new Date(Date.now() + 60_000).toISOString() });
    const v = await client.Void({ operation_id: "g:v2", hold_id: r2.hold_id, reason: "provider failed" });
    expect(v).toMatchObject({ hold: { status: "voided", released_units: "50" }, balance: { available_units: "9007199254740870", reserved_units: "0" } });

    expect(await client.GetBalance({ tenant_id: "g1" })).toEqual({
      tenant_id: "g1",
      currency: "USD",
      available_units: "9007199254740870",
      reserved_units: "0",
    });

    // Transfers by their operation ids: those that exist, an unknown id left out.
    const found = await client.GetTransfers({ operation_ids: ["g:r2", "g:v2", "g:missing"] });
    expect(found.transfers.map((t) => [t.operation_id, t.kind, t.units, t.hold_id]).sort()).toEqual(
      [
        ["g:r2", "reserve", "50", r2.hold_id],
        ["g:v2", "void", "50", r2.hold_id],
      ].sort(),
    );
    expect((await refusal(client.GetTransfers({ operation_ids: [] }))).code).toBe("invalid_request");

    // Many holds in one read: each as it stands, an unknown id left out.
    const many = await client.GetHolds({ hold_ids: [r.hold_id, "hold_missing", r2.hold_id] });
    expect(many.holds.map((h) => [h.hold_id, h.status, h.captured_units, h.released_units]).sort()).toEqual(
      [
        [r.hold_id, "captured", "123", "877"],
        [r2.hold_id, "voided", "0", "50"],
      ].sort(),
    );

    const page = await client.ListEntries({ tenant_id: "g1", limit: 3 });
    expect(page.entries.map((e) => e.kind)).toEqual(["void", "reserve", "capture"]);
    expect(page.entries[0]).toMatchObject({ operation_id: "g:v2", units: "50", hold_id: r2.hold_id, reason: "provider failed" });
    expect(page.entries[2]!.legs).toEqual([
      { account: "held", units: "-1000" },
      { account: "revenue", units: "123" },
      { account: "available", units: "877" },
    ]);
    const rest = await client.ListEntries({ tenant_id: "g1", limit: 3, cursor: page.next_cursor });
    expect(rest.entries.map((e) => e.kind)).toEqual(["reserve", "credit"]);
    expect(rest.next_cursor).toBe("");

    const check = await client.CheckInvariant({ tenant_id: "g1" });
    expect(check).toMatchObject({ ok: true, journal_sum: "0", unbalanced_transfers: "0" });
    expect(check.tenants).toEqual([
      {
        tenant_id: "g1",
        credits: "9007199254740993",
        captured: "123",
        available: "9007199254740870",
        held: "0",
        journal_available: "9007199254740870",
        journal_held: "0",
        journal_funding: "-9007199254740993",
        journal_revenue: "123",
        open_holds: "0",
        ok: true,
      },
    ]);
  });

  it("reports refusals with the contract's codes", async () => {
    const { client } = ledger;
    await client.Credit({ operation_id: "g:credit2", tenant_id: "g2", units: "10", reason: "funds" });
    expect((await refusal(client.Reserve({ operation_id: "g2:r", tenant_id: "g2", units: "11", ttl_seconds: 60 }))).code).toBe("insufficient_balance");
    expect((await refusal(client.Reserve({ operation_id: "g2:r", tenant_id: "g2", units: "0", ttl_seconds: 60 }))).code).toBe("invalid_request");
    expect((await refusal(client.Reserve({ operation_id: "g2:r", tenant_id: "g2", units: "5" }))).code).toBe("invalid_request");
    expect((await refusal(client.GetHold({ hold_id: "hold_missing" }))).code).toBe("not_found");
    expect((await refusal(client.GetHolds({ hold_ids: [] }))).code).toBe("invalid_request");
    expect((await refusal(client.GetHolds({ hold_ids: Array.from({ length: 1001 }, (_, i) => `hold_${i}`) }))).code).toBe("invalid_request");
    expect((await refusal(client.Capture({ operation_id: "g2:c", hold_id: "hold_missing", units: "1" }))).code).toBe("not_found");
    expect((await refusal(client.Credit({ operation_id: "g:credit2", tenant_id: "g2", units: "11", reason: "funds" }))).code).toBe("conflict");
    const r = await client.Reserve({ operation_id: "g2:r", tenant_id: "g2", units: "10", ttl_seconds: 60 });
    expect((await refusal(client.Capture({ operation_id: "g2:c", hold_id: r.hold_id, units: "11" }))).code).toBe("invalid_request");
    await client.Void({ operation_id: "g2:v", hold_id: r.hold_id });
    const second = await refusal(client.Void({ operation_id: "g2:v-again", hold_id: r.hold_id }));
    expect(second.code).toBe("conflict");
    expect(second.message).toContain("voided");
    expect((await refusal(client.ListEntries({ tenant_id: "g2", cursor: "bogus" }))).code).toBe("invalid_request");
  });

  it("publishes each movement to JetStream with the caller's request id, and empties the outbox", async () => {
    const { client } = ledger;
    const requestId = "req_ledgergrpctest0001";
    await client.Credit({ operation_id: "g3:credit", tenant_id: "g3", units: "100", reason: "funds" }, { requestId });
    const r = await client.Reserve({ operation_id: "g3:r", tenant_id: "g3", units: "40", ttl_seconds: 60 }, { requestId });
    await client.Capture({ operation_id: "g3:c", hold_id: r.hold_id, units: "15" }, { requestId });
    const r2 = await client.Reserve({ operation_id: "g3:r2", tenant_id: "g3", units: "5", ttl_seconds: 60 }, { requestId });
    await client.Void({ operation_id: "g3:v", hold_id: r2.hold_id }, { requestId });
    // Refused and replayed calls publish nothing.
    await client.Reserve({ operation_id: "g3:r", tenant_id: "g3", units: "40", ttl_seconds: 60 }, { requestId });
    await refusal(client.Reserve({ operation_id: "g3:too-much", tenant_id: "g3", units: "1000", ttl_seconds: 60 }, { requestId }));

    const seen = await publishedOf(ledger, (e) => e.data.tenant_id === "g3", 5);
    const mine = seen;
    expect(mine.map((s) => s.type)).toEqual(["ledger.credited", "ledger.reserved", "ledger.captured", "ledger.reserved", "ledger.voided"]);
    for (const s of mine) expect(s.request_id).toBe(requestId);
    expect(mine[2]!.data).toMatchObject({ hold_id: r.hold_id, units: "15", released_units: "25", available_units: "85", reserved_units: "0" });
    const outbox = await ledger.db.prisma.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM outbox_events");
    expect(outbox[0]!.n).toBe(0);
  });

  it("lists the events of the tenant's transfers by operation id, exactly as they were published (the audit trail keeps no copy)", async () => {
    const { client } = ledger;
    const requestId = "req_ledgergrpcevents01";
    await client.Credit({ operation_id: "g8:credit", tenant_id: "g8", units: "100", reason: "funds" }, { requestId });
    const r = await client.Reserve({ operation_id: "g8:r", tenant_id: "g8", units: "40", ttl_seconds: 60 }, { requestId });
    await client.Capture({ operation_id: "g8:c", hold_id: r.hold_id, units: "15" }, { requestId });

    const published = (await publishedOf(ledger, (e) => e.data.tenant_id === "g8", 3)).map((e) => ({
      event_id: e.id,
      type: e.type,
      source: e.source,
      request_id: e.request_id,
      occurred_at: e.occurred_at,
      data: e.data,
    }));
    const listed = await client.ListEvents({ tenant_id: "g8", operation_ids: ["g8:c", "g8:credit", "g8:r", "g8:unknown"] });
    expect(listed.events.map(({ data_json, ...e }) => ({ ...e, data: JSON.parse(data_json) as unknown }))).toEqual(published);
    expect(published.map((e) => e.type)).toEqual(["ledger.credited", "ledger.reserved", "ledger.captured"]);
    expect((await client.ListEvents({ tenant_id: "g9", operation_ids: ["g8:c"] })).events).toEqual([]);
    expect((await refusal(client.ListEvents({ tenant_id: "g8", operation_ids: [] }))).code).toBe("invalid_request");
  });

  it("applies a batch: each item decided on its own and answered as its single call would be, with its own request id on its events", async () => {
    const { client } = ledger;
    await client.Credit({ operation_id: "g4:credit", tenant_id: "g4", units: "100", reason: "funds" });
    const open = await client.Reserve({ operation_id: "g4:r0", tenant_id: "g4", units: "10", ttl_seconds: 60 });
    const { results } = await client.ApplyBatch({
      items: [
        { reserve: { operation_id: "g4:r1", tenant_id: "g4", units: "60", ttl_seconds: 60 }, request_id: "req_batchitem0000000001" },
        { reserve: { operation_id: "g4:r2", tenant_id: "g4", units: "60", ttl_seconds: 60 }, request_id: "req_batchitem0000000002" },
        { capture: { operation_id: "g4:c0", hold_id: open.hold_id, units: "4" }, request_id: "req_batchitem0000000003" },
        { void: { operation_id: "g4:v", hold_id: "hold_missing" } },
        { reserve: { operation_id: "", tenant_id: "g4", units: "1", ttl_seconds: 60 } },
        {},
      ],
    });
    // Concurrent reservations of 60 out of 90: whichever is applied first wins, the other is refused.
    const [won, lost] = results[0]!.reserved ? [0, 1] : [1, 0];
    expect(results.map((r) => r.result)).toEqual([...(won === 0 ? ["reserved", "error"] : ["error", "reserved"]), "captured", "error", "error", "error"]);
    expect(results[won]!.reserved).toMatchObject({ replayed: false, units: "60" });
    expect(results[lost]!.error).toEqual({ code: "insufficient_balance", message: expect.any(String) });
    expect(results[2]!.captured).toMatchObject({ hold: { status: "captured", captured_units: "4" } });
    expect(await client.GetBalance({ tenant_id: "g4" })).toMatchObject({ available_units: "36", reserved_units: "60" });
    expect(results[3]!.error).toMatchObject({ code: "not_found" });
    expect(results[4]!.error).toMatchObject({ code: "invalid_request" });
    expect(results[5]!.error).toMatchObject({ code: "invalid_request" });
    // The same items again replay what moved and refuse what was refused.
    const winner = `g4:r${won + 1}`;
    const again = await client.ApplyBatch({ items: [{ reserve: { operation_id: winner, tenant_id: "g4", units: "60", ttl_seconds: 60 } }] });
    expect(again.results[0]!.reserved).toEqual({ ...results[won]!.reserved, replayed: true });
    expect((await client.CheckInvariant({ tenant_id: "g4" })).ok).toBe(true);

    const byOperation = new Map<string, string | null>();
    for (const e of await publishedOf(ledger, (e) => e.data.tenant_id === "g4", 4)) byOperation.set(String(e.data.operation_id), e.request_id);
    expect(byOperation.get(winner)).toBe(`req_batchitem000000000${won + 1}`);
    expect(byOperation.get("g4:c0")).toBe("req_batchitem0000000003");
    expect(byOperation.has(`g4:r${lost + 1}`)).toBe(false);

    expect((await refusal(client.ApplyBatch({ items: [] }))).code).toBe("invalid_request");
  });

  it("spends from an allotment in batches: posts, releases and claim reports; the views and the relay's events follow", async () => {
    const { client } = ledger;
    const requestId = "req_ledgerallotment00001";
    await client.Credit({ operation_id: "g5:credit", tenant_id: "g5", units: "1000", reason: "funds" });
    const a = await client.Reserve({ operation_id: "g5:a", tenant_id: "g5", units: "600", ttl_seconds: 3600, allotment: true });
    expect(await client.GetHold({ hold_id: a.hold_id })).toMatchObject({ status: "open", allotment: true, units: "600" });
    // Unclaimed, the allotment counts as available in the views.
    expect(await client.GetBalance({ tenant_id: "g5" })).toMatchObject({ available_units: "1000", reserved_units: "0" });

    const { results } = await client.ApplyBatch(
      {
        items: [
          { post: { operation_id: "g5:p1", hold_id: a.hold_id, units: "100", reason: "req 1" } },
          { post: { operation_id: "g5:p2", hold_id: a.hold_id, units: "50", reason: "req 2" } },
          { release: { operation_id: "g5:l1", hold_id: a.hold_id, units: "200" } },
          { post: { operation_id: "g5:p3", hold_id: a.hold_id, units: "251" } },
          { capture: { operation_id: "g5:c", hold_id: a.hold_id, units: "1" } },
        ],
        reports: [{ hold_id: a.hold_id, claimed_units: "190", version: "1" }],
      },
      { requestId },
    );
    expect(results.map((r) => r.result)).toEqual(["posted", "posted", "released", "error", "error"]);
    const last = results[2]!.released!;
    expect(last.hold).toMatchObject({ hold_id: a.hold_id, status: "open", allotment: true, captured_units: "150", released_units: "200" });
    expect(last.balance).toMatchObject({ available_units: "600", reserved_units: "250" });
    expect(results[3]!.error).toMatchObject({ code: "invalid_request" });
    expect(results[4]!.error).toMatchObject({ code: "invalid_request" });
    // Left 250, claimed 190 of which 150 posted: 40 in use, 210 shown as available.
    expect(await client.GetBalance({ tenant_id: "g5" })).toMatchObject({ available_units: "810", reserved_units: "40" });
    // Reports alone are a batch; an older version is ignored; nothing at all is not.
    expect(await client.ApplyBatch({ reports: [{ hold_id: a.hold_id, claimed_units: "150", version: "2" }] })).toEqual({ results: [] });
    await client.ApplyBatch({ reports: [{ hold_id: a.hold_id, claimed_units: "400", version: "1" }] });
    expect(await client.GetBalance({ tenant_id: "g5" })).toMatchObject({ available_units: "850", reserved_units: "0" });
    expect((await refusal(client.ApplyBatch({}))).code).toBe("invalid_request");
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ hold_id: a.hold_id, claimed_units: "1", version: String(i) }));
    expect((await refusal(client.ApplyBatch({ reports: tooMany }))).code).toBe("invalid_request");
    // A malformed report refuses the whole call before its items move.
    const bad = client.ApplyBatch({
      items: [{ post: { operation_id: "g5:p-bad", hold_id: a.hold_id, units: "1" } }],
      reports: [{ hold_id: "bad id", claimed_units: "1", version: "9" }],
    });
    expect((await refusal(bad)).code).toBe("invalid_request");
    expect((await client.GetHold({ hold_id: a.hold_id })).captured_units).toBe("150");

    const v = await client.Void({ operation_id: "g5:v", hold_id: a.hold_id }, { requestId });
    expect(v.hold).toMatchObject({ status: "voided", allotment: true, captured_units: "150", released_units: "450" });
    expect(await client.GetBalance({ tenant_id: "g5" })).toMatchObject({ available_units: "850", reserved_units: "0" });
    expect((await client.CheckInvariant({ tenant_id: "g5" })).tenants[0]).toMatchObject({ ok: true, captured: "150", open_holds: "0", journal_revenue: "150" });
    const entries = await client.ListEntries({ tenant_id: "g5", limit: 10 });
    expect(entries.entries.map((e) => [e.kind, e.units])).toEqual([
      ["void", "250"],
      ["release", "200"],
      ["post", "50"],
      ["post", "100"],
      ["reserve", "600"],
      ["credit", "1000"],
    ]);

    const seen = await publishedOf(ledger, (e) => e.data.tenant_id === "g5", 6);
    expect(seen.map((s) => s.type)).toEqual(["ledger.credited", "ledger.reserved", "ledger.posted", "ledger.posted", "ledger.released", "ledger.voided"]);
    expect(seen[2]!.data).toMatchObject({ hold_id: a.hold_id, operation_id: "g5:p1", units: "100", available_units: "400", reserved_units: "500" });
    expect(seen[4]!.data).toMatchObject({ hold_id: a.hold_id, operation_id: "g5:l1", units: "200", available_units: "600", reserved_units: "250" });
    expect(seen[4]!.request_id).toBe(requestId);
    // The hold's movements travel in batches on the ledger's batch subject, never one message each; a credit goes alone (docs/decisions/0331).
    const subjects = subjectsFor(ledger.namespace);
    const jsm = await (await ledger.nats()).jetstreamManager();
    const bySubject = (await jsm.streams.info(subjects.stream, { subjects_filter: subjects.all })).state.subjects ?? {};
    expect(bySubject[subjects.batch("ledger")]).toBeGreaterThan(0);
    for (const type of ["ledger.reserved", "ledger.posted", "ledger.released", "ledger.voided"] as const)
      expect(bySubject[subjects.subject(type)]).toBeUndefined();
    expect(bySubject[subjects.subject("ledger.credited")]).toBeGreaterThan(0);
  });
});
