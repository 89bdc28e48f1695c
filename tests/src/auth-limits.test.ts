import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startStack, type JsonResponse, type Stack } from "@gateway/testkit";

// Limits on the password and token routes (docs/decisions/0180). The edge trusts
// loopback as its proxy (the default), so X-Connecting-IP says which client a
// request comes from.
let stack: Stack;
const PER_ADDRESS = 6;

beforeAll(async () => {
  stack = await startStack({
    services: [],
    env: {
      edge: {
        AUTH_ATTEMPTS_PER_ADDRESS_PER_MINUTE: String(PER_ADDRESS),
        AUTH_ATTEMPTS_PER_EMAIL_PER_MINUTE: "1000",
        AUTH_BACKOFF_AFTER_FAILURES: "2",
        AUTH_BACKOFF_BASE_SECONDS: "1",
        AUTH_BACKOFF_MAX_SECONDS: "30",
      },
    },
  });
});
afterAll(async () => stack?.shutdown());

let ipCount = 0;
/** A client address of its own for each caller: 198.18.x.y (a benchmarking range). */
const newClient = () => {
  ipCount += 1;
  return { "x-connecting-ip": `198.18.${ipCount >> 8}.${ipCount & 255}` };
};
const password = "a-long-enough-password";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function register(label: string): Promise<string> {
  const email = `${label}-${randomBytes(4).toString("hex")}@example.com`;
  const res = await call(stack.edgeUrl, "POST", "/auth/register", { body: { email, password }, headers: newClient() });
  expect(res.status).toBe(201);
  return email;
}

const login = (email: string, pw: string, headers: Record<string, string> = newClient(), url = stack.edgeUrl) =>
  call(url, "POST", "/auth/login", { body: { email, password: pw }, headers });

function expectRateLimited(res: JsonResponse) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ error: "rate_limited", message: expect.any(String), request_id: res.headers.get("x-request-id") });
  const retryAfter = Number(res.headers.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

/** What a client can compare between two answers: all but the request id. */
const answer = (res: JsonResponse) => ({
  status: res.status,
  body: { ...res.body, request_id: undefined },
  retryAfter: res.headers.get("retry-after"),
  contentType: res.headers.get("content-type"),
});

describe("a login flood", () => {
  it("from one address gets 429 past the limit, before any password is checked, while a real user from another address signs in", async () => {
    const user = await register("real");
    const flooder = newClient();
    const flood = Array.from({ length: 30 }, (_, i) => login(`guess-${i}-${randomBytes(3).toString("hex")}@example.com`, "wrong-password-123", flooder));
    const [real, ...answers] = await Promise.all([login(user, password), ...flood]);
    expect(real.status).toBe(200);
    expect(real.body.token).toEqual(expect.any(String));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(PER_ADDRESS);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).toHaveLength(30 - PER_ADDRESS);
    refused.forEach(expectRateLimited);
    // Still refused for that address, whatever email or password it tries.
    expectRateLimited(await login(user, password, flooder));
  });

  it("limits registration and refresh per address too", async () => {
    const client = newClient();
    for (let i = 0; i < PER_ADDRESS; i++) {
      const res = await call(stack.edgeUrl, "POST", "/auth/register", {
        body: { email: `reg-${i}-${randomBytes(3).toString("hex")}@example.com`, password },
        headers: client,
      });
      expect(res.status).toBe(201);
    }
    expectRateLimited(
      await call(stack.edgeUrl, "POST", "/auth/register", {
        body: { email: `reg-last-${randomBytes(3).toString("hex")}@example.com`, password },
        headers: client,
      }),
    );
    for (let i = 0; i < PER_ADDRESS; i++) {
      expect((await call(stack.edgeUrl, "POST", "/auth/refresh", { body: { refresh_token: `rt_guess_${i}` }, headers: client })).status).toBe(401);
    }
    expectRateLimited(await call(stack.edgeUrl, "POST", "/auth/refresh", { body: { refresh_token: "rt_guess_last" }, headers: client }));
  });

  it("cannot pick its own address from an untrusted peer: the header is ignored, the peer is counted", async () => {
    const edge2 = await stack.addEdge("edge-2", { TRUSTED_PROXY_CIDRS: "192.0.2.0/24" });
    const answers = [];
    for (let i = 0; i < PER_ADDRESS + 4; i++) answers.push(await login(`spoof-${i}@example.com`, "wrong-password-123", newClient(), edge2));
    expect(answers.slice(0, PER_ADDRESS).map((r) => r.status)).toEqual(Array(PER_ADDRESS).fill(401));
    answers.slice(PER_ADDRESS).forEach(expectRateLimited);
    await stack.stop("edge-2");
  });
});

describe("consecutive failed sign-ins of one email", () => {
  it("make each further attempt wait, doubling, from any address and even with the right password; a success resets the run", async () => {
    const email = await register("victim");
    expect((await login(email, "wrong-password-1")).status).toBe(401);
    expect((await login(email, "wrong-password-2")).status).toBe(401); // the second failure: wait 1 s
    const locked = await login(email, password);
    expectRateLimited(locked);
    expect(locked.headers.get("retry-after")).toBe("1");
    await sleep(1_100);
    expect((await login(email, "wrong-password-3")).status).toBe(401); // the third: wait 2 s
    const longer = await login(email, password);
    expectRateLimited(longer);
    expect(longer.headers.get("retry-after")).toBe("2");
    await sleep(2_100);
    expect((await login(email, password)).status).toBe(200);
    // A fresh run: one failure does not lock.
    expect((await login(email, "wrong-password-4")).status).toBe(401);
    expect((await login(email, password)).status).toBe(200);
  });
});

describe("unknown and known emails", () => {
  it("get identical answers: the same 401, and the same backoff", async () => {
    const known = await register("known");
    const unknown = `unknown-${randomBytes(4).toString("hex")}@example.com`;
    for (let i = 0; i < 2; i++) {
      const [a, b] = [await login(known, "wrong-password-123"), await login(unknown, "wrong-password-123")];
      expect(a.status).toBe(401);
      expect(answer(a)).toEqual(answer(b));
    }
    const [a, b] = [await login(known, "wrong-password-123"), await login(unknown, "wrong-password-123")];
    expectRateLimited(a);
    expect(answer(a)).toEqual(answer(b));
  });

  it("take about the same time (a password check runs for both)", async () => {
    const known = [];
    for (let i = 0; i < 5; i++) known.push(await register(`timed${i}`));
    const timed = async (email: string) => {
      const started = performance.now();
      expect((await login(email, "wrong-password-123")).status).toBe(401);
      return performance.now() - started;
    };
    const knownMs: number[] = [];
    const unknownMs: number[] = [];
    for (const email of known) {
      knownMs.push(await timed(email));
      unknownMs.push(await timed(`nobody-${randomBytes(4).toString("hex")}@example.com`));
    }
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    // Without the decoy check an unknown email would answer many times faster than a scrypt run.
    const ratio = median(unknownMs) / median(knownMs);
    expect(ratio, `known ${knownMs.join(", ")} ms; unknown ${unknownMs.join(", ")} ms`).toBeGreaterThan(1 / 3);
    expect(ratio).toBeLessThan(3);
  });
});
