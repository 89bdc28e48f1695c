import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeAgents, deliver } from "./deliver.js";
import { verifySignature, signBody } from "./signature.js";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let server: Server;
let base: string;
const routes = new Map<string, Handler>();
const seen: { path: string; body: string; headers: IncomingMessage["headers"] }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ path: req.url ?? "", body, headers: req.headers });
      const handler = routes.get(req.url ?? "");
      if (handler) handler(req, body, res);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await closeAgents();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const local = { allowPrivate: true };
const json = (body: string) => ({ body, headers: { "content-type": "application/json" }, timeoutMs: 2000, policy: local });

describe("deliver", () => {
  it("sends the exact body and headers and reports a 2xx as delivered", async () => {
    routes.set("/ok", (_req, _body, res) => res.writeHead(204).end());
    const body = '{"message_id":"msg_1","title":"é"}';
    const result = await deliver(`${base}/ok`, {
      ...json(body),
      headers: { "content-type": "application/json", "x-service-signature": signBody("s3cret-s3cret-s3", body) },
    });
    expect(result).toMatchObject({ ok: true, status: 204, error: null });
    const got = seen.at(-1)!;
    expect(got.body).toBe(body);
    expect(verifySignature("s3cret-s3cret-s3", got.body, got.headers["x-service-signature"] as string)).toBe(true);
  });

  it("reports a non-2xx with its status and the answer's body", async () => {
    routes.set("/fail", (_req, _body, res) => res.writeHead(500).end("nope"));
    expect(await deliver(`${base}/fail`, json("{}"))).toEqual({ ok: false, status: 500, error: "http_500", body: "nope" });
  });

  it("times out a receiver that does not answer, without throwing", async () => {
    routes.set("/slow", () => {});
    const result = await deliver(`${base}/slow`, { ...json("{}"), timeoutMs: 200 });
    expect(result).toEqual({ ok: false, status: null, error: "timeout" });
  });

  it("reports a receiver that cuts the connection", async () => {
    routes.set("/cut", (req) => req.socket.destroy());
    const result = await deliver(`${base}/cut`, json("{}"));
    expect(result.ok).toBe(false);
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/^connection_failed/);
  });

  it("follows a redirect with the same method and body, and checks every hop", async () => {
    routes.set("/moved", (_req, _body, res) => res.writeHead(307, { location: "/ok" }).end());
    expect(await deliver(`${base}/moved`, json('{"a":1}'))).toMatchObject({ ok: true, status: 204 });
    expect(seen.at(-1)).toMatchObject({ path: "/ok", body: '{"a":1}' });

    const loopbackOnly = { allowPrivate: false, allowHttpLoopback: true };
    for (const target of ["http://10.0.0.1/", "http://169.254.169.254/latest", "http://[fd00::1]/"]) {
      routes.set("/to-private", (_req, _body, res) => res.writeHead(302, { location: target }).end());
      const before = seen.length;
      expect(await deliver(`${base}/to-private`, { ...json("{}"), policy: loopbackOnly })).toEqual({ ok: false, status: null, error: "private_address" });
      expect(seen.length).toBe(before + 1); // only the first hop was contacted
    }
  });

  it("stops after maxRedirects", async () => {
    routes.set("/loop", (_req, _body, res) => res.writeHead(308, { location: "/loop" }).end());
    expect(await deliver(`${base}/loop`, { ...json("{}"), maxRedirects: 2 })).toMatchObject({ ok: false, status: 308, error: "http_308" });
  });

  it("refuses private targets before connecting, also through DNS", async () => {
    const before = seen.length;
    const strict = { allowPrivate: false };
    expect(await deliver(`${base}/ok`, { ...json("{}"), policy: strict })).toEqual({ ok: false, status: null, error: "private_address" });
    const viaName = base.replace("127.0.0.1", "localhost");
    expect(await deliver(`${viaName}/ok`, { ...json("{}"), policy: strict })).toEqual({ ok: false, status: null, error: "private_address" });
    expect(seen.length).toBe(before);
  });
});
