import { createHmac, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient } from "@gateway/grpc-kit";
import type { MockProvider } from "@gateway/mock-provider";
import { conversationsV1, filesV1, jobsV1, ledgerV1, managedAiV1, messagingV1 } from "@gateway/protos";
import { call, newTenant, startStack, type ServiceName, type Stack } from "@gateway/testkit";
import { customer, managedModel, mockProvider, operator, PROVIDER_KEY, upstream, type Customer, type Operator } from "../src/support/managed-ai.js";
import { PROFILE, saveFigures } from "./support/report.js";
import { findSecrets, scannedCount } from "./support/secrets.js";
import { SSRF_FIELDS, SSRF_TARGETS } from "./support/ssrf-table.js";

/*
 * Hostile input against the real stack: every route of /openapi.json fuzzed
 * (routes other branches add are fuzzed after the merge without a change
 * here), JWT attacks, SSRF through customer-supplied URLs, and a scan of every
 * log line and event for the secrets the run created.
 */

const RUNS_PER_ROUTE = PROFILE === "long" ? 400 : 30;
const CODES = new Set([
  "invalid_request",
  "unauthorized",
  "insufficient_balance",
  "forbidden",
  "not_found",
  "conflict",
  "payload_too_large",
  "validation_failed",
  "rate_limited",
  "internal_error",
  "upstream_error",
  "unavailable",
]);
/** Section 6c: the Messages routes answer in Anthropic's error shape, its type fixed by the status. */
const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  409: "invalid_request_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  502: "overloaded_error",
  503: "overloaded_error",
};
/** The Messages routes as the edge sees the URL (after `..` segments are resolved, it may be another route). */
const ANTHROPIC_ROUTE = /^\/v1\/apps\/ai\/[^/]+\/v1\/messages(\/count_tokens)?\/?$/i;
/** What must never appear in an answer: stack frames, file paths, SQL, driver names. */
const LEAK = /\n\s+at |\bat [\w.$<>]+ \(|node_modules|file:\/\/|\/work\/|\.(ts|js|mjs):\d+|\bprisma\b|\bSELECT\b.*\bFROM\b|PrismaClient|ECONNREFUSED/i;

let stack: Stack;
let provider: MockProvider;
let op: Operator;
let c: Customer;
let other: Customer;
const secrets: string[] = [PROVIDER_KEY];
const figures = {
  routes: 0,
  inputsTried: 0,
  brokenFramingUnanswered: 0,
  serverErrors: 0,
  badShapes: 0,
  stackTraces: 0,
  jwtAttacks: 0,
  jwtAccepted: 0,
  ssrfCases: 0,
  ssrfAccepted: 0,
  ssrfDeferred: 0,
  serviceCalls: 0,
  serviceCallsAccepted: 0,
  loginFloodAttempts: 0,
  loginFloodRefused: 0,
  loginFloodPasswordChecks: 0,
  realSignInsRefused: 0,
};
const failures: string[] = [];

beforeAll(async () => {
  provider = await mockProvider();
  stack = await startStack();
  secrets.push(stack.admin.password, stack.jwtSecret);
  op = await operator(stack);
  secrets.push(op.token);
  await upstream(stack, op, provider, "mock");
  await managedModel(stack, op, { alias: "small", upstreamId: "mock", inputPerMtok: 1_000_000, outputPerMtok: 2_000_000 });
  c = await customer(stack, op, { units: 5_000_000, alias: "ai", defaultModel: "small", keyPolicy: { scopes: ["ai:invoke", "jobs:read"] } });
  other = await customer(stack, op, { units: 1_000, alias: "ai", defaultModel: "small" });
  secrets.push(c.key, c.token, c.password, other.key, other.token, other.password);
}, 180_000);

afterAll(async () => {
  if (stack) {
    const names = ["edge", "ledger", "managed-ai", "jobs", "messaging", "files"] as ServiceName[];
    const found = await findSecrets(stack, names, secrets);
    const scanned = await scannedCount(stack, names);
    saveFigures("fuzz", { ...figures, secretsFound: found.length, logLinesScanned: scanned });
    await stack.shutdown();
    expect(found).toEqual([]);
  }
  await provider?.close();
}, 120_000);

type Operation = { method: string; path: string; parameters?: { name: string; in: string }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } };
type Schema = { type?: string | string[]; properties?: Record<string, Schema>; items?: Schema; enum?: unknown[]; anyOf?: Schema[]; oneOf?: Schema[] };

async function operations(): Promise<Operation[]> {
  const doc = (await (await fetch(`${stack.edgeUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      out.push({ ...op, method: method.toUpperCase(), path });
    }
  }
  return out;
}

const hostileString = fc.oneof(
  fc.constantFrom(
    "",
    "..",
    "../../../../etc/passwd",
    "..\\..\\windows\\win.ini",
    "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "\u0000",
    "\u202e\ud800\udfff",
    "x".repeat(5_000),
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "${jndi:ldap://x}",
    "__proto__",
    "constructor",
    `req_${"9".repeat(200)}`,
    "💸".repeat(300),
  ),
  fc.string({ maxLength: 40 }),
  fc.fullUnicodeString({ maxLength: 40 }),
);
const hostileNumber = fc.oneof(fc.constantFrom(1e308, -1e308, -1, -0, 0.5, 2 ** 53 + 1, 2 ** 64, Number.MAX_SAFE_INTEGER), fc.double(), fc.integer());
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(hostileString, { maxLength: 5 }),
);

/** Bodies: not JSON at all, JSON of the wrong shape, or the route's own fields with hostile values. */
function bodyArb(schema: Schema | undefined): fc.Arbitrary<string> {
  const raw = fc.constantFrom(
    "{",
    '{"a":',
    "[",
    "null",
    "NaN",
    "1e999999",
    '{"__proto__":{"admin":true}}',
    "\u0000",
    `"${"z".repeat(2_000_000)}"`,
    "{}{}",
    "\ufeff{}",
  );
  const anyJson = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
  const fields = Object.keys(schema?.properties ?? {});
  if (fields.length === 0) return fc.oneof(raw, anyJson);
  const shaped = fc
    .dictionary(fc.constantFrom(...fields, "unexpected_field", "__proto__"), hostileValue, { maxKeys: fields.length + 2 })
    .map((o) => JSON.stringify(o));
  return fc.oneof({ weight: 1, arbitrary: raw }, { weight: 1, arbitrary: anyJson }, { weight: 4, arbitrary: shaped });
}

const pathValue = fc.oneof(
  fc.constantFrom("..", "%2e%2e", "..%2f..%2fetc%2fpasswd", "%00", "a".repeat(3_000), "%F0%9F%92%B8", "-1", "9".repeat(40), "null", "key_%E2%80%AE"),
  fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent),
);
const headerValue = fc.oneof(fc.constantFrom("", " ", "x".repeat(8_000), "../../etc/passwd", "-1", "1e309", "0"), fc.stringMatching(/^[\x20-\x7e]{0,60}$/));

function credentialsFor(path: string, kind: "right" | "none"): Record<string, string> {
  if (kind === "none") return {};
  if (path.startsWith("/ops/")) return { authorization: `Bearer ${op.token}` };
  if (path.startsWith("/console/")) return { authorization: `Bearer ${c.token}` };
  if (path.startsWith("/v1/")) return { "x-api-key": c.key };
  return {};
}

type Answer = { status: number; text: string; requestId: string | null };

/** Framing headers: fetch refuses to send hostile values of these, so such inputs go over a raw socket. */
const FRAMING = /^(content-length|transfer-encoding)$/i;

/**
 * One HTTP/1.1 request written byte for byte (`Connection: close`), the answer
 * read until the server closes. A declared length that is not the body's is the
 * client breaking its own framing: the server may answer (judged as any answer)
 * or close without one, and "no answer" is not a failure then. A length longer
 * than the body half-closes the write side so that the server stops waiting.
 */
function sendRaw(method: string, url: string, headers: Record<string, string>, body: string): Promise<Answer | Error | "no_answer_to_broken_framing"> {
  const u = new URL(url);
  const bytes = Buffer.from(body);
  const lines = [`${method} ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, "Connection: close"];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  const declared = Object.entries(headers).find(([k]) => /^content-length$/i.test(k))?.[1];
  // Framing the client breaks itself: a length that is not the body's. The server may answer
  // (judged) or close, even with a reset that discards its answer (HTTP/1.1 cannot do better).
  const brokenFraming = declared !== undefined && declared.trim() !== String(bytes.length);
  const short = brokenFraming && /^\d+$/.test(declared.trim()) && Number(declared.trim()) > bytes.length;
  return new Promise((resolve) => {
    const socket = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error("The operation was aborted due to timeout")), 20_000);
    socket.on("data", (c: Buffer) => chunks.push(c));
    // A reset may come after the answer (the server closed with our body unread): what arrived is judged.
    let failure: Error | undefined;
    socket.on("error", (err) => {
      failure = err;
    });
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("latin1");
      const head = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (!head || text.indexOf("\r\n\r\n") < 0) {
        if (brokenFraming) return resolve("no_answer_to_broken_framing");
        return resolve(failure ?? new Error(`no answer (${text.length} bytes: ${JSON.stringify(text.slice(0, 80))})`));
      }
      const split = text.indexOf("\r\n\r\n");
      const requestId = /\r\nx-request-id: *([^\r]*)/i.exec(text.slice(0, split))?.[1] ?? null;
      resolve({ status: Number(head[1]), text: Buffer.from(text.slice(split + 4), "latin1").toString("utf8"), requestId });
    });
    socket.write(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
    socket.write(bytes);
    if (short) socket.end(); // the server waits for bytes that never come: tell it there are none
  });
}

async function send(method: string, url: string, headers: Record<string, string>, body?: string): Promise<Answer | Error | "no_answer_to_broken_framing"> {
  if (Object.keys(headers).some((k) => FRAMING.test(k))) return sendRaw(method, url, headers, body ?? "");
  try {
    const res = await fetch(url, { method, headers, ...(body !== undefined && method !== "GET" ? { body } : {}), signal: AbortSignal.timeout(20_000) });
    return { status: res.status, text: await res.text(), requestId: res.headers.get("x-request-id") };
  } catch (err) {
    return err as Error;
  }
}

/** The contract for a bad input: a 4xx in the error shape with the response's request id, no leak. */
function judge(where: string, answer: Answer | Error | "no_answer_to_broken_framing", url?: string): void {
  figures.inputsTried++;
  if (answer === "no_answer_to_broken_framing") {
    figures.brokenFramingUnanswered++;
    return;
  }
  if (answer instanceof Error) {
    figures.serverErrors++;
    const cause = (answer as { cause?: { code?: string; message?: string } }).cause;
    failures.push(`${where}: no answer (${answer.message}${cause ? `: ${cause.code ?? ""} ${cause.message ?? ""}` : ""})`);
    return;
  }
  if (LEAK.test(answer.text)) {
    figures.stackTraces++;
    failures.push(`${where}: leaks internals: ${answer.text.slice(0, 300)}`);
  }
  if (answer.status >= 500) {
    figures.serverErrors++;
    failures.push(`${where}: ${answer.status} ${answer.text.slice(0, 300)}`);
  }
  if (answer.status >= 400) {
    let body: Record<string, unknown> | undefined;
    try {
      body = JSON.parse(answer.text) as Record<string, unknown>;
    } catch {
      body = undefined;
    }
    const anthropic = url !== undefined && ANTHROPIC_ROUTE.test(new URL(url).pathname);
    const error = body?.error as { type?: unknown; message?: unknown } | undefined;
    const ok = anthropic
      ? body &&
        body.type === "error" &&
        error?.type === ANTHROPIC_TYPES[answer.status] &&
        typeof error?.message === "string" &&
        body.request_id === answer.requestId
      : body && typeof body.error === "string" && CODES.has(body.error) && typeof body.message === "string" && body.request_id === answer.requestId;
    if (!ok) {
      figures.badShapes++;
      failures.push(`${where}: ${answer.status} not in the error shape: ${answer.text.slice(0, 200)}`);
    }
  }
}

describe("every route of /openapi.json, fuzzed", () => {
  it(`answers hostile bodies, paths, queries and headers with a 4xx in the contract's shape (${RUNS_PER_ROUTE} inputs per route)`, async () => {
    // HOSTILE_ROUTES=<regex> fuzzes only the matching "METHOD /path" (to replay one route's inputs while debugging).
    const only = process.env.HOSTILE_ROUTES ? new RegExp(process.env.HOSTILE_ROUTES) : null;
    const ops = (await operations()).filter((o) => !only || only.test(`${o.method} ${o.path}`));
    expect(ops.length).toBeGreaterThan(only ? 0 : 20);
    figures.routes = ops.length;
    for (const route of ops) {
      // Our own sessions must survive the run: logout is fuzzed without credentials only.
      const credentialed = route.path !== "/auth/logout";
      const pathParams = (route.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      const queryParams = (route.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const headerParams = (route.parameters ?? []).filter((p) => p.in === "header").map((p) => p.name);
      const schema = route.requestBody?.content?.["application/json"]?.schema;
      const hasBody = route.requestBody !== undefined;
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            path: fc.tuple(...pathParams.map(() => pathValue)),
            query: fc.dictionary(fc.constantFrom(...queryParams, "limit", "cursor", "unexpected"), fc.oneof(hostileString, hostileNumber.map(String)), {
              maxKeys: 3,
            }),
            headers: fc.dictionary(fc.constantFrom(...headerParams, "content-type", "idempotency-key", "x-api-key"), headerValue, { maxKeys: 3 }),
            body: bodyArb(schema),
            auth: fc.constantFrom<"right" | "none">(credentialed ? "right" : "none", credentialed ? "right" : "none", "none"),
          }),
          async (input) => {
            let i = 0;
            let path = route.path.replace(/\{[^}]+\}/g, () => input.path[i++] ?? "x");
            const query = new URLSearchParams(Object.entries(input.query).map(([k, v]): [string, string] => [k, String(v).slice(0, 3_000)])).toString();
            if (query) path += `?${query}`;
            const headers: Record<string, string> = { "content-type": "application/json", ...credentialsFor(route.path, input.auth), ...input.headers };
            const answer = await send(route.method, `${stack.edgeUrl}${path}`, headers, hasBody || route.method !== "GET" ? input.body : undefined);
            judge(
              `${route.method} ${route.path}${process.env.HOSTILE_ROUTES ? ` ${JSON.stringify({ path, headers: { ...headers, "x-api-key": headers["x-api-key"] ? "[key]" : undefined }, body: input.body.slice(0, 60), bodyLength: input.body.length })}` : ""}`,
              answer,
              `${stack.edgeUrl}${path}`,
            );
            return true;
          },
        ),
        { numRuns: RUNS_PER_ROUTE, seed: 10, endOnFailure: true },
      );
    }
    for (const name of ["edge", "ledger", "managed-ai", "jobs", "messaging", "files"] as ServiceName[]) expect(stack.process(name).running, name).toBe(true);
    expect(failures.slice(0, 20)).toEqual([]);
  }, 900_000);
});

function jwt(header: Record<string, unknown>, payload: Record<string, unknown>, secret: string | null): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const head = `${enc(header)}.${enc(payload)}`;
  return `${head}.${secret === null ? "" : createHmac("sha256", secret).update(head).digest("base64url")}`;
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;
}

describe("JWT attacks", () => {
  it("refuses forged, expired and foreign tokens on customer and operator routes", async () => {
    const real = claimsOf(c.token);
    const now = Math.floor(Date.now() / 1000);
    const base = { ...real, iat: now, exp: now + 600 };
    const cases: [string, string][] = [
      ["alg none", jwt({ alg: "none", typ: "JWT" }, base, null)],
      ["alg None, signature kept", `${jwt({ alg: "None", typ: "JWT" }, base, null)}${c.token.split(".")[2]}`],
      ["wrong key", jwt({ alg: "HS256", typ: "JWT" }, base, "a-wrong-secret-of-enough-length-000000")],
      ["RS256 header with the HS secret", jwt({ alg: "RS256", typ: "JWT" }, base, stack.jwtSecret)],
      ["expired", jwt({ alg: "HS256", typ: "JWT" }, { ...real, iat: now - 7200, exp: now - 3600 }, stack.jwtSecret)],
      [
        "another user's sub in a signed payload, signature of the original",
        `${c.token.split(".")[0]}.${Buffer.from(JSON.stringify({ ...real, sub: other.userId })).toString("base64url")}.${c.token.split(".")[2]}`,
      ],
      ["wrong audience", jwt({ alg: "HS256", typ: "JWT" }, { ...base, aud: "somebody-else" }, stack.jwtSecret)],
      ["refresh-typed claims", jwt({ alg: "HS256", typ: "JWT" }, { ...base, typ: "refresh" }, stack.jwtSecret)],
      ["an API key as a session", c.key],
      ["garbage", "a.b.c"],
      ["empty", ""],
    ];
    for (const [name, token] of cases) {
      for (const path of ["/console/me", "/console/balance", "/console/keys", "/ops/ai/upstreams"]) {
        figures.jwtAttacks++;
        const res = await call(stack.edgeUrl, "GET", path, { headers: { authorization: `Bearer ${token}` } });
        if (res.status < 400) figures.jwtAccepted++;
        expect(res.status, `${name} on ${path}`).toBe(401);
        expect(res.body.error).toBe("unauthorized");
      }
    }

    // A valid token of another tenant sees nothing of this tenant's: its request views answer 404.
    const mine = await fetch(`${stack.edgeUrl}/v1/apps/ai/ai/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": c.key },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    const requestId = mine.headers.get("x-request-id")!;
    figures.jwtAttacks++;
    const foreign = await call(stack.edgeUrl, "GET", `/console/requests/${requestId}`, { token: other.token });
    if (foreign.status < 400) figures.jwtAccepted++;
    expect(foreign.status).toBe(404);
    expect((await call(stack.edgeUrl, "GET", `/console/requests/${requestId}`, { token: c.token })).status).toBe(200);
    // A tenant token is no operator's.
    figures.jwtAttacks++;
    const notOperator = await call(stack.edgeUrl, "GET", "/ops/ai/upstreams", { token: c.token });
    if (notOperator.status < 400) figures.jwtAccepted++;
    expect(notOperator.status).toBe(403);
    // A widget token (signed by the same gateway) opens widget routes only: never a customer's or an operator's.
    const widgetKey = await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { name: "widget", scopes: ["bot:session:create"] },
    });
    secrets.push(widgetKey.body.data.key);
    const grant = await call<{ data: { token: string; refresh_token: string } }>(stack.edgeUrl, "POST", "/v1/apps/bot/widget/auth", {
      headers: { "x-api-key": widgetKey.body.data.key },
      body: { visitor_id: "visitor-1" },
    });
    expect(grant.status, JSON.stringify(grant.body)).toBe(201);
    secrets.push(grant.body.data.token, grant.body.data.refresh_token);
    for (const path of ["/console/me", "/console/balance", "/ops/ai/upstreams", "/v1/apps/ai/ai/v1/models"]) {
      figures.jwtAttacks++;
      const res = await call(stack.edgeUrl, "GET", path, { headers: { authorization: `Bearer ${grant.body.data.token}` } });
      if (res.status < 400) figures.jwtAccepted++;
      expect(res.status, `widget token on ${path}`).toBe(401);
    }
    // A logged-out session's token is dead at once.
    const throwaway = await newTenant(stack.edgeUrl, "logout");
    secrets.push(throwaway.token, throwaway.password);
    expect((await call(stack.edgeUrl, "POST", "/auth/logout", { token: throwaway.token })).status).toBe(204);
    figures.jwtAttacks++;
    const dead = await call(stack.edgeUrl, "GET", "/console/me", { token: throwaway.token });
    if (dead.status < 400) figures.jwtAccepted++;
    expect(dead.status).toBe(401);
  }, 120_000);
});

describe("SSRF through customer-supplied URLs", () => {
  let canary: Server;
  let hits = 0;
  beforeAll(async () => {
    canary = createServer((_req, res) => {
      hits++;
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    });
    await new Promise<void>((r) => canary.listen(0, "127.0.0.1", () => r()));
  });
  afterAll(() => new Promise<void>((r) => canary.close(() => r())));

  it("knows every URL field of the customer routes (a new one must join the table)", async () => {
    const doc = (await (await fetch(`${stack.edgeUrl}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
    const found: string[] = [];
    const walk = (schema: Schema | undefined, prefix: string, at: string) => {
      if (!schema) return;
      for (const [name, sub] of Object.entries(schema.properties ?? {})) {
        if (/(url|uri|endpoint|host)$/i.test(name)) found.push(`${at} ${prefix}${name}`);
        walk(sub, `${prefix}${name}.`, at);
      }
      for (const alt of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(alt, prefix, at);
      walk(schema.items, prefix.endsWith(".") ? `${prefix.slice(0, -1)}[].` : `${prefix}[].`, at);
    };
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (path.startsWith("/ops/")) continue; // operators configure upstreams on purpose
      for (const [method, o] of Object.entries(methods)) walk(o.requestBody?.content?.["application/json"]?.schema, "", `${method.toUpperCase()} ${path}`);
    }
    const covered = new Set(SSRF_FIELDS.map((f) => `${f.method} ${f.path} ${f.field}`));
    expect(
      found.filter((f) => !covered.has(f)),
      "URL fields on customer routes without an SSRF case in tests/reliability/support/ssrf-table.ts",
    ).toEqual([]);
  });

  it("refuses private, loopback and link-local targets, also behind DNS names and redirects", async () => {
    const canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}/hook`;
    const pushKey = await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { name: "ssrf", scopes: ["push:send"] },
    });
    secrets.push(pushKey.body.data.key);
    const conversationKey = await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { name: "ssrf-conv", scopes: ["conversation:events:write"] },
    });
    expect(conversationKey.status, JSON.stringify(conversationKey.body)).toBe(201);
    secrets.push(conversationKey.body.data.key);
    const tronKey = await call<{ data: { key: string } }>(stack.edgeUrl, "POST", "/console/keys", {
      token: c.token,
      body: { name: "ssrf-tron", scopes: ["tron:lease"] },
    });
    expect(tronKey.status, JSON.stringify(tronKey.body)).toBe(201);
    secrets.push(tronKey.body.data.key);
    const accepted: string[] = [];
    for (const field of SSRF_FIELDS) {
      for (const target of [...SSRF_TARGETS, canaryUrl]) {
        figures.ssrfCases++;
        const res = await field.send(
          {
            stack,
            customer: c,
            operatorToken: op.token,
            pushKey: pushKey.body.data.key,
            conversationKey: conversationKey.body.data.key,
            tronKey: tronKey.body.data.key,
          },
          target,
        );
        if (res.deferred) figures.ssrfDeferred++;
        else if (!res.refused) {
          figures.ssrfAccepted++;
          accepted.push(`${field.method} ${field.path} ${field.field} = ${target}: ${res.status} ${res.detail}`);
        }
      }
    }
    expect(accepted).toEqual([]);
    expect(hits).toBe(0);
  });
});

describe("the doors left open by default (issue 26)", () => {
  it("refuses every unary call of every service without the service token, or with a wrong one", async () => {
    const UNAUTHENTICATED = 16;
    const contracts = [
      [ledgerV1, "ledger"],
      [managedAiV1, "managed-ai"],
      [jobsV1, "jobs"],
      [messagingV1, "messaging"],
      [conversationsV1, "messaging"],
      [filesV1, "files"],
    ] as const;
    const accepted: string[] = [];
    for (const [contract, service] of contracts) {
      for (const token of [undefined, randomBytes(32).toString("hex")]) {
        const client = createClient(contract, stack.address(service), {
          deadlineMs: 5_000,
          tls: stack.tls,
          ...(token ? { serviceToken: token } : {}),
        }) as unknown as Record<string, (req: unknown) => Promise<unknown>> & { close(): void };
        try {
          for (const [method, def] of Object.entries(contract.definition() as Record<string, { requestStream: boolean; responseStream: boolean }>)) {
            if (def.requestStream || def.responseStream) continue;
            figures.serviceCalls++;
            const code = await client[method]!({}).then(
              () => "answered",
              (err: unknown) => (err as { cause?: { code?: number } }).cause?.code,
            );
            if (code !== UNAUTHENTICATED) {
              figures.serviceCallsAccepted++;
              accepted.push(`${service} ${method} ${token ? "wrong token" : "no token"}: ${String(code)}`);
            }
          }
        } finally {
          // biome-ignore lint/nursery/noFloatingPromises: close() returns void; the rule reads the type of the index signature beside it
          client.close();
        }
      }
    }
    expect(figures.serviceCalls).toBeGreaterThan(50);
    expect(accepted).toEqual([]);
  }, 120_000);

  it("answers a login flood from one address with 429 before any password check, while real users sign in", async () => {
    // An edge replica with the limits a deployment has (the test stack's own edge has them lifted).
    const edge = await stack.addEdge("edge-9", { AUTH_ATTEMPTS_PER_ADDRESS_PER_MINUTE: "20", AUTH_ATTEMPTS_PER_EMAIL_PER_MINUTE: "10" });
    const attacker = { "x-connecting-ip": "203.0.113.66" };
    const victim = `victim-${randomBytes(4).toString("hex")}@example.com`;
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        call(edge, "POST", "/auth/login", { headers: attacker, body: { email: i % 2 === 0 ? victim : other.email, password: `guess-${i}-not-the-password` } }),
      ),
    );
    for (const res of answers) {
      figures.loginFloodAttempts++;
      if (res.status === 429) figures.loginFloodRefused++;
      else {
        figures.loginFloodPasswordChecks++;
        expect(res.status).toBe(401);
      }
    }
    // At most the address's allowance reached a password check; everything else was refused first.
    expect(figures.loginFloodPasswordChecks).toBeLessThanOrEqual(20);
    expect(answers.filter((r) => r.status === 429).every((r) => Number(r.headers.get("retry-after")) > 0)).toBe(true);
    // A real user from another address signs in meanwhile.
    const real = await call<{ token?: string }>(edge, "POST", "/auth/login", {
      headers: { "x-connecting-ip": "198.51.100.7" },
      body: { email: c.email, password: c.password },
    });
    if (real.status !== 200) figures.realSignInsRefused++;
    expect(real.status).toBe(200);
    if (real.body.token) secrets.push(real.body.token);
  }, 120_000);
});
