import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import { verifySignature } from "@gateway/outbound";
import { parseKeyring } from "@gateway/secrets";
import type { ConnectedAccountResolver } from "../app-context.js";
import { PushConfigInput, storePushConfig } from "../instances/config.js";
import { statusOf } from "./settle.js";
import { sendToTarget, type TargetDeps } from "./targets.js";

const keyring = parseKeyring(`k1:${randomBytes(32).toString("base64")}`);
let server: Server;
let base = "";
const seen: { path: string; headers: Record<string, unknown>; body: string }[] = [];
const BOT = "777:account-bot-token";

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ path: req.url ?? "", headers: req.headers, body });
      const ok = req.url === `/bot${BOT}/sendMessage` || req.url === "/hook";
      res.writeHead(ok ? 200 : 401, { "content-type": "application/json" }).end(JSON.stringify({ ok }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function deps(resolve: ConnectedAccountResolver): TargetDeps {
  return { keyring, egress: { allowPrivate: true }, timeoutMs: 2_000, telegramApiBase: base, resolveConnectedAccount: resolve };
}
const payload = { message_id: "push_1", title: "T", text: "body", sent_at: "2026-11-22T00:00:00.000Z" };
const noAccounts: ConnectedAccountResolver = async () => {
  throw new AppError("not_found", "none");
};

async function target(raw: unknown) {
  return (await storePushConfig(PushConfigInput.parse({ targets: [raw] }), null, "inst_1", keyring, { allowPrivate: true })).targets[0]!;
}

describe("telegram targets through a connected account", () => {
  it("send with the account's secret as the bot token", async () => {
    const asked: string[] = [];
    const resolver: ConnectedAccountResolver = async (tenantId, id) => {
      asked.push(`${tenantId}/${id}`);
      return { id, provider: "telegram", secret: BOT };
    };
    const t = await target({ id: "tg", type: "telegram", connected_account_id: "ca_9", chat_id: 42 });
    const outcome = await sendToTarget(deps(resolver), "ten_1", "inst_1", t, payload);
    expect(outcome).toEqual({ ok: true, status: 200, error: null });
    expect(asked).toEqual(["ten_1/ca_9"]);
    const last = seen.at(-1)!;
    expect(last.path).toBe(`/bot${BOT}/sendMessage`);
    expect(JSON.parse(last.body)).toEqual({ chat_id: 42, text: "T\n\nbody" });
  });

  it("fail (not delivered, never thrown) for a missing account, another provider's, or a token the bot API refuses", async () => {
    const t = await target({ id: "tg", type: "telegram", connected_account_id: "ca_9", chat_id: 42 });
    expect(await sendToTarget(deps(noAccounts), "ten_1", "inst_1", t, payload)).toEqual({ ok: false, status: null, error: "connected_account_not_found" });
    const other: ConnectedAccountResolver = async (_t, id) => ({ id, provider: "openai", secret: "sk" });
    expect(await sendToTarget(deps(other), "ten_1", "inst_1", t, payload)).toEqual({ ok: false, status: null, error: "connected_account_not_telegram" });
    const down: ConnectedAccountResolver = async () => {
      throw new AppError("unavailable", "down");
    };
    expect(await sendToTarget(deps(down), "ten_1", "inst_1", t, payload)).toMatchObject({ ok: false, error: "connected_account_unavailable" });
    const bad = await target({ id: "tg", type: "telegram", bot_token: "1:wrong", chat_id: 42 });
    expect(await sendToTarget(deps(noAccounts), "ten_1", "inst_1", bad, payload)).toEqual({ ok: false, status: 401, error: "http_401" });
  });
});

describe("webhook targets", () => {
  it("sign the exact body with the target's secret and carry the message id", async () => {
    const t = await target({ id: "h", type: "webhook", url: `${base}/hook`, secret: "s3cret" });
    expect(await sendToTarget(deps(noAccounts), "ten_1", "inst_1", t, payload)).toEqual({ ok: true, status: 200, error: null });
    const last = seen.at(-1)!;
    expect(verifySignature("s3cret", last.body, last.headers["x-service-signature"] as string)).toBe(true);
    expect(last.headers["x-service-event-id"]).toBe("push_1");
    expect(JSON.parse(last.body)).toEqual(payload);
  });

  it("are refused at delivery when the URL resolves to a private address", async () => {
    const t = await target({ id: "h", type: "webhook", url: `${base.replace("127.0.0.1", "localhost")}/hook` });
    const before = seen.length;
    const outcome = await sendToTarget({ ...deps(noAccounts), egress: { allowPrivate: false } }, "ten_1", "inst_1", t, payload);
    expect(outcome).toEqual({ ok: false, status: null, error: "private_address" });
    expect(seen.length).toBe(before);
  });
});

describe("statusOf", () => {
  it("is delivered, partial or failed", () => {
    expect(statusOf([{ ok: true }, { ok: true }])).toBe("delivered");
    expect(statusOf([{ ok: true }, { ok: false }])).toBe("partial");
    expect(statusOf([{ ok: false }, { ok: null }])).toBe("failed");
  });
});
