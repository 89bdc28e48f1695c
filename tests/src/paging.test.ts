import { beforeAll, describe, expect, it } from "vitest";
import type { MockProvider } from "@gateway/mock-provider";
import { call, type Stack } from "@gateway/testkit";
import { byokInstance, customerProvider } from "./support/byok.js";
import { customer, meteredStack, type Customer, type Operator } from "./support/managed-ai.js";
import { quoteAndLease, type LeaseCustomer } from "./support/tron.js";

// Paging on every capped list (CONTRACT.md section 13, docs/decisions/0212): `limit` and
// `cursor`, `next_cursor` beside `data`, null at the end, neither skipping nor repeating an
// item over a list that changes under it; and the usage list's `mode`.
let stack: Stack;
let op: Operator;
const metered = meteredStack({
  env: { "managed-ai": { ALLOW_PRIVATE_TARGETS: "true" }, jobs: { CALLBACK_ALLOW_HTTP_LOOPBACK: "true", CALLBACK_BASE_DELAY_MS: "20" } },
});
beforeAll(() => {
  ({ stack, op } = metered);
});

type Page = { data: { id?: string; event_id?: string }[]; next_cursor?: string | null };
type Auth = { token: string } | { headers: Record<string, string> };

/**
 * Reads a list `limit` at a time from its first page until `next_cursor` is null,
 * running `between(n)` after page n: the list changes while it is read.
 */
async function readAll(path: string, auth: Auth, limit: number, between: (page: number) => Promise<void> = async () => undefined): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null | undefined;
  for (let page = 0; ; page++) {
    const sep = path.includes("?") ? "&" : "?";
    const url = `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const res = await call<Page>(stack.edgeUrl, "GET", url, auth);
    expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    expect(res.body).toHaveProperty("next_cursor");
    ids.push(...res.body.data.map((i) => (i.id ?? i.event_id)!));
    cursor = res.body.next_cursor;
    if (cursor === null) return ids;
    expect(cursor).toMatch(/^\d+$/);
    await between(page);
  }
}

async function list(path: string, auth: Auth): Promise<string[]> {
  const res = await call<Page>(stack.edgeUrl, "GET", path, auth);
  expect(res.status).toBe(200);
  expect(res.body).not.toHaveProperty("next_cursor"); // without limit and cursor: as before paging
  return res.body.data.map((i) => (i.id ?? i.event_id)!);
}

async function apiKey(c: { token: string }, scopes: string[]): Promise<{ headers: Record<string, string> }> {
  const res = await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", { token: c.token, body: { name: "reader", scopes } });
  expect(res.status).toBe(201);
  return { headers: { "X-API-Key": res.body.data.key } };
}

const chat = (c: Customer, alias: string) =>
  fetch(`${stack.edgeUrl}/v1/apps/ai/${alias}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": c.key },
    body: JSON.stringify({ max_tokens: 5, messages: [{ role: "user", content: "page me" }] }),
  }).then(async (res) => {
    expect(res.status).toBe(200);
    await res.json();
    return res.headers.get("x-request-id")!;
  });

describe("paging every capped list", () => {
  it("keys: new keys and revocations under the reader neither skip nor repeat one", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "small" });
    for (let i = 0; i < 7; i++) await apiKey(c, []);
    const before = await list("/console/keys", c);
    expect(before).toHaveLength(8);
    const revoked = before[5]!;
    const seen = await readAll("/console/keys", c, 3, async (page) => {
      if (page !== 0) return;
      await apiKey(c, []); // a new key at the head: not in this reading
      expect((await call(stack.edgeUrl, "DELETE", `/console/keys/${revoked}`, { token: c.token })).status).toBe(204);
    });
    expect(seen).toEqual(before.filter((id) => id !== revoked));
    expect((await call(stack.edgeUrl, "GET", "/console/keys?cursor=abc", { token: c.token })).status).toBe(400);
    expect((await call(stack.edgeUrl, "GET", "/console/keys?limit=201", { token: c.token })).status).toBe(400);
    expect((await call(stack.edgeUrl, "GET", "/console/keys?limit=0", { token: c.token })).status).toBe(400);
  });

  it("usage records: calls made while reading go to the head; mode filters managed, byok and all", async () => {
    let byokApi: MockProvider | undefined;
    try {
      byokApi = await customerProvider();
      const c = await customer(stack, op, { units: 1_000_000, alias: "chat", defaultModel: "small" });
      expect((await byokInstance(stack, c, "mine", byokApi, { pricing: { input_units_per_mtok: 1_000_000, output_units_per_mtok: 1_000_000 } })).status).toBe(
        201,
      );
      const managed: string[] = [];
      const byok: string[] = [];
      for (let i = 0; i < 5; i++) {
        managed.unshift(await chat(c, "chat"));
        byok.unshift(await chat(c, "mine"));
      }
      let during = 0;
      const seen = await readAll("/console/services/managed-ai/usage", c, 2, async () => {
        await chat(c, "chat");
        during++;
      });
      expect(seen).toEqual(managed);
      expect(during).toBe(2);
      expect(await readAll("/console/services/managed-ai/usage?mode=byok", c, 2)).toEqual(byok);
      const all = await readAll("/console/services/managed-ai/usage?mode=all", c, 4);
      expect(all).toHaveLength(5 + 5 + during); // and those made while reading
      expect(all.filter((id) => byok.includes(id))).toEqual(byok);
      const modes = await call<{ data: { mode: string; final_units: number | null; status: string }[] }>(
        stack.edgeUrl,
        "GET",
        "/console/services/managed-ai/usage?mode=byok&limit=200",
        c,
      );
      expect(modes.body.data.every((r) => r.mode === "byok")).toBe(true);
      const managedOnly = await call<{ data: { mode: string }[] }>(stack.edgeUrl, "GET", "/console/services/managed-ai/usage", c);
      expect(managedOnly.body.data.map((r) => r.mode)).toEqual(Array(5 + during).fill("managed"));
      expect((await call(stack.edgeUrl, "GET", "/console/services/managed-ai/usage?mode=none", c)).status).toBe(400);
    } finally {
      await byokApi?.close();
    }
  });

  it("jobs and energy leases", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "small" });
    const key = await apiKey(c, ["tron:lease", "jobs:read"]);
    const lessee: LeaseCustomer = { tenantId: c.tenantId, token: c.token, key: key.headers["X-API-Key"]! };
    for (let i = 0; i < 5; i++) expect((await quoteAndLease(stack, lessee)).lease.status).toBe(202);
    const jobs = await list("/v1/jobs", key);
    expect(jobs).toHaveLength(5);
    const more = async () => {
      expect((await quoteAndLease(stack, lessee)).lease.status).toBe(202);
    };
    expect(await readAll("/v1/jobs", key, 2, more)).toEqual(jobs);
    const leases = await list("/v1/apps/tron/leases", key);
    expect(leases).toHaveLength(7);
    expect(await readAll("/v1/apps/tron/leases", key, 3, more)).toEqual(leases);
  });

  it("files", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "small" });
    const key = await apiKey(c, ["file:read", "file:write"]);
    const upload = async (i: number) => {
      const res = await fetch(`${stack.edgeUrl}/v1/apps/file/upload`, {
        method: "PUT",
        headers: { ...key.headers, "x-filename": `f${i}.txt` },
        body: `file ${i}`,
      });
      expect(res.status).toBe(201);
    };
    for (let i = 0; i < 5; i++) await upload(i);
    const files = await list("/v1/apps/file/list", key);
    expect(await readAll("/v1/apps/file/list", key, 2, () => upload(99))).toEqual(files);
  });

  it("SocialOps threads (by creation while activity reorders the inbox) and messages (oldest first)", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "small" });
    expect(
      (
        await call(stack.edgeUrl, "POST", "/console/services", {
          token: c.token,
          body: { service_id: "socialops", alias: "desk", status: "active", config: {} },
        })
      ).status,
    ).toBe(201);
    const key = await apiKey(c, ["socialops:read", "socialops:write"]);
    let n = 0;
    const event = async (thread: string) => {
      const res = await call<{ data: { thread_id: string } }>(stack.edgeUrl, "POST", "/v1/apps/socialops/desk/webhook/generic", {
        ...key,
        body: { event_id: `e${++n}`, thread_id: thread, subject: thread, text: `message ${n}` },
      });
      expect(res.status).toBe(202);
      return res.body.data.thread_id;
    };
    const threads: string[] = [];
    for (const t of ["a", "b", "c", "d", "e"]) threads.unshift(await event(t));
    // Activity on the oldest thread while reading moves it to the inbox's head, not between pages.
    const seen = await readAll("/v1/apps/socialops/desk/threads", key, 2, async () => {
      await event("a");
      await event("f");
    });
    expect(seen).toEqual(threads);
    const oldest = threads[threads.length - 1]!;
    const messages = await list(`/v1/apps/socialops/desk/threads/${oldest}/messages`, key);
    expect(messages.length).toBeGreaterThanOrEqual(2);
    // Oldest first: a message that arrives while reading joins the end, and is read once, last.
    const read = await readAll(`/v1/apps/socialops/desk/threads/${oldest}/messages`, key, 1, async (page) => {
      if (page === 0) await event("a");
    });
    const after = await list(`/v1/apps/socialops/desk/threads/${oldest}/messages`, key);
    expect(read).toEqual(after);
    expect(read.slice(0, messages.length)).toEqual(messages);
    expect(read.length).toBeGreaterThan(messages.length);
    expect(new Set(read).size).toBe(read.length);
  });

  it("account webhooks and their deliveries", async () => {
    const c = await customer(stack, op, { units: 0, alias: "chat", defaultModel: "small" });
    const made: string[] = [];
    const create = async () => {
      const res = await call<{ data: { id: string } }>(stack.edgeUrl, "POST", "/console/webhooks", {
        token: c.token,
        body: { url: "https://127.0.0.1:9/never", events: ["ping"] },
      });
      expect(res.status).toBe(201);
      return res.body.data.id;
    };
    for (let i = 0; i < 5; i++) made.unshift(await create());
    const gone = made[3]!;
    expect(
      await readAll("/console/webhooks", c, 2, async (page) => {
        await create();
        if (page === 0) expect((await call(stack.edgeUrl, "DELETE", `/console/webhooks/${gone}`, c)).status).toBe(204);
      }),
    ).toEqual(made.filter((id) => id !== gone));

    const pinged = made[0]!;
    const events: string[] = [];
    const ping = async () => {
      const res = await call<{ data: { event_id: string } }>(stack.edgeUrl, "POST", `/console/webhooks/${pinged}/test`, c);
      expect(res.status).toBe(202);
      return res.body.data.event_id;
    };
    for (let i = 0; i < 5; i++) events.unshift(await ping());
    expect(await list(`/console/webhooks/${pinged}/deliveries`, c)).toEqual(events);
    expect(await readAll(`/console/webhooks/${pinged}/deliveries`, c, 2, () => ping().then(() => undefined))).toEqual(events);
  });
});
