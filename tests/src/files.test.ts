import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, downloadRaw, newTenant, patternSha, startStack, uploadRaw, type Stack, type UploadResult } from "@gateway/testkit";
import { createKey, type Tenant } from "./keys-helpers.js";

const MAX_BYTES = 64 * 1_048_576;
const BIG = 60 * 1_048_576 + 12_345; // more than 50 MB

let stack: Stack;
let owner: Tenant;
let other: Tenant;
let key: string; // scopes ["*"]
let otherKey: string;

beforeAll(async () => {
  stack = await startStack({
    services: ["files"],
    env: { files: { FILES_MAX_BYTES: String(MAX_BYTES), FILES_SWEEP_INTERVAL_MS: "300", FILES_EXHAUSTED_GRACE_SECONDS: "0" } },
  });
  owner = await newTenant(stack.edgeUrl, "files");
  other = await newTenant(stack.edgeUrl, "files-other");
  key = (await createKey(stack, owner)).key;
  otherKey = (await createKey(stack, other)).key;
}, 180_000);
afterAll(async () => stack?.shutdown());

const storeDir = () => join(tmpdir(), `gw-${stack.runId}-files`);
async function stored(): Promise<string[]> {
  const top = (await readdir(storeDir()).catch(() => [])).filter((n) => n !== ".partial");
  const partial = (await readdir(join(storeDir(), ".partial")).catch(() => [])).map((n) => `.partial/${n}`);
  return [...top, ...partial].sort();
}
const rows = () => stack.sql<{ id: string; state: string }>("files", "SELECT id, state FROM files ORDER BY id");

function answered(r: UploadResult): { status: number; body: any; headers: Record<string, unknown> } {
  if ("aborted" in r) throw new Error(`the upload got no answer: ${r.error ?? "aborted"}`);
  return r;
}

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectAlive() {
  expect(stack.process("edge").running).toBe(true);
  expect(stack.process("files").running).toBe(true);
}

describe("upload and download", () => {
  let big: { id: string; download_url: string; share_url: string; sha256: string };

  it("PUT streams a file larger than 50 MB; the download is byte-exact", async () => {
    const res = answered(await uploadRaw(stack.edgeUrl, { key, size: BIG, seed: 7, headers: { "x-filename": "big.bin", "x-expires-in": "3600" } }));
    expect(res.status).toBe(201);
    const expectedSha = patternSha(BIG, 7);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^file_/),
      filename: "big.bin",
      size: BIG,
      sha256: expectedSha,
      content_type: "application/octet-stream",
      created_at: expect.stringMatching(/Z$/),
      expires_at: expect.stringMatching(/Z$/),
      max_downloads: null,
      download_url: expect.stringMatching(new RegExp(`^${stack.edgeUrl}/v1/apps/file/download/[A-Za-z0-9_-]{43}$`)),
      share_url: expect.stringMatching(new RegExp(`^${stack.edgeUrl}/v1/apps/file/share/[A-Za-z0-9_-]{43}$`)),
    });
    expect(Date.parse(res.body.data.expires_at) - Date.parse(res.body.data.created_at)).toBe(3_600_000);
    big = res.body.data;

    const dl = await downloadRaw(big.download_url);
    expect(dl.status).toBe(200);
    expect(dl.complete).toBe(true);
    expect(dl.size).toBe(BIG);
    expect(dl.sha256).toBe(expectedSha);
    expect(dl.headers["content-length"]).toBe(String(BIG));
    expect(dl.headers["content-type"]).toBe("application/octet-stream");
    expect(dl.headers["content-disposition"]).toBe(`attachment; filename="big.bin"; filename*=UTF-8''big.bin`);
    expect(dl.headers["x-content-type-options"]).toBe("nosniff");
    expect(dl.headers["repr-digest"]).toBe(`sha-256=:${Buffer.from(expectedSha, "hex").toString("base64")}:`);
  });

  it("POST (legacy) stores the raw body even when it is labelled JSON: the JSON parser never touches it", async () => {
    const data = Buffer.from('{"not": "parsed", "n": 1}\n');
    const res = answered(
      await uploadRaw(stack.edgeUrl, { method: "POST", key, data, headers: { "content-type": "application/json", "x-filename": "data.json" } }),
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ filename: "data.json", size: data.length, content_type: "application/json" });
    const dl = await downloadRaw(res.body.data.download_url);
    expect(dl.text).toBe(data.toString());
    expect(dl.headers["content-type"]).toBe("application/json");
  });

  it("accepts a chunked body (no Content-Length) and counts it", async () => {
    const res = answered(await uploadRaw(stack.edgeUrl, { key, size: 3 * 1_048_576 + 1, seed: 3, chunked: true }));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ filename: "file", size: 3 * 1_048_576 + 1, sha256: patternSha(3 * 1_048_576 + 1, 3) });
  });

  it("a client that goes away mid-download crashes nothing, and the file stays downloadable", async () => {
    for (let i = 0; i < 3; i++) {
      const cut = await downloadRaw(big.download_url, { stopAfter: 2 * 1_048_576 });
      expect(cut.complete).toBe(false);
    }
    await new Promise((r) => setTimeout(r, 300));
    expectAlive();
    const again = await downloadRaw(big.download_url);
    expect(again.sha256).toBe(big.sha256);
    const [row] = await stack.sql<{ downloads: number }>("files", "SELECT downloads FROM files WHERE id = $1", [big.id]);
    expect(row!.downloads).toBe(5); // every started download counts
  });

  it("HEAD tells the size without counting a download", async () => {
    const head = await downloadRaw(big.download_url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers["content-length"]).toBe(String(BIG));
    const [row] = await stack.sql<{ downloads: number }>("files", "SELECT downloads FROM files WHERE id = $1", [big.id]);
    expect(row!.downloads).toBe(5);
  });
});

describe("limits and aborts", () => {
  it("413 when the declared size is above FILES_MAX_BYTES, before the body is read", async () => {
    const before = { rows: await rows(), stored: await stored() };
    const res = answered(await uploadRaw(stack.edgeUrl, { key, size: MAX_BYTES + 1 }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: "payload_too_large", message: expect.any(String), request_id: expect.any(String), max_bytes: MAX_BYTES });
    expect(await rows()).toEqual(before.rows);
    expect(await stored()).toEqual(before.stored);
  });

  it("413 when the client sends more than it declared, or no Content-Length at all: the bytes are counted", async () => {
    const before = { rows: await rows(), stored: await stored() };
    // No Content-Length: refused by count once the limit is passed.
    const chunked = answered(await uploadRaw(stack.edgeUrl, { key, chunked: true, size: MAX_BYTES + 70_000 }));
    expect(chunked.status).toBe(413);
    expect(chunked.body.error).toBe("payload_too_large");
    // A declared 1000 bytes followed by much more: HTTP framing makes the request those 1000 bytes; the rest is
    // garbage on the connection (Node answers it 400 and closes). Never more than declared is stored.
    const lying = await uploadRaw(stack.edgeUrl, { key, declared: 1000, size: 8 * 1_048_576 });
    if (!("aborted" in lying)) expect([201, 400]).toContain(lying.status);
    await until("cleanup", async () => (await rows()).filter((r) => r.state === "uploading").length === 0);
    const added = await stack.sql<{ size: string }>("files", "SELECT size FROM files WHERE NOT (id = ANY($1))", [before.rows.map((r) => r.id)]);
    for (const r of added) expect(Number(r.size)).toBe(1000);
    expect((await stored()).filter((n) => n.startsWith(".partial/"))).toEqual([]);
    expectAlive();
  });

  it("an upload aborted mid-body (client disconnect) leaves no file and no record, and crashes nothing", async () => {
    // A tenant of its own, so other tests' uploads settling meanwhile cannot blur the picture.
    const tenant = await newTenant(stack.edgeUrl, "files-abort");
    const abortKey = (await createKey(stack, tenant)).key;
    const failedUploads = () => stack.logs("files").filter((l) => l.rpc === "/gateway.files.v1.FilesService/UploadFile" && l.code !== "OK").length;
    const failedBefore = failedUploads();
    for (const chunked of [false, true]) {
      const r = await uploadRaw(stack.edgeUrl, { key: abortKey, size: 30 * 1_048_576, abortAfter: 8 * 1_048_576, chunked });
      expect("aborted" in r).toBe(true);
    }
    // Both uploads reached the files service and failed there (not just stopped at the edge).
    await until("the files service to log both failed uploads", async () => failedUploads() >= failedBefore + 2, 60_000);
    await until(
      "no record of the tenant and no partial bytes",
      async () =>
        (await stack.sql("files", "SELECT id FROM files WHERE tenant_id = $1", [tenant.tenantId])).length === 0 &&
        (await stored()).every((n) => !n.startsWith(".partial/")),
      60_000,
    );
    // Every stored object belongs to a record: nothing orphaned.
    const ids = new Set((await rows()).map((r) => r.id));
    for (const name of await stored()) expect(ids.has(name)).toBe(true);
    expectAlive();
    const after = answered(await uploadRaw(stack.edgeUrl, { key: abortKey, size: 10 }));
    expect(after.status).toBe(201);
  });
});

describe("counting, expiry and the sweeper", () => {
  it("with x-max-downloads: 1, exactly one of many concurrent downloads gets the bytes", async () => {
    const up = answered(await uploadRaw(stack.edgeUrl, { key, size: 256 * 1024, seed: 5, headers: { "x-max-downloads": "1" } }));
    expect(up.body.data.max_downloads).toBe(1);
    const results = await Promise.all(Array.from({ length: 20 }, () => downloadRaw(up.body.data.download_url)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.sha256).toBe(patternSha(256 * 1024, 5));
    const refused = results.filter((r) => r.status === 404);
    expect(refused).toHaveLength(19);
    for (const r of refused) expect(JSON.parse(r.text)).toEqual({ error: "not_found", message: expect.any(String), request_id: expect.any(String) });
    // Exhausted: share is gone too, and (grace 0) the sweeper removes the bytes.
    expect((await call(stack.edgeUrl, "GET", new URL(up.body.data.share_url).pathname)).status).toBe(404);
    await until("the exhausted file to be swept", async () => {
      const [row] = await stack.sql<{ state: string; removed_reason: string }>("files", "SELECT state, removed_reason FROM files WHERE id = $1", [
        up.body.data.id,
      ]);
      return row!.state === "removed" && row!.removed_reason === "exhausted";
    });
    expect(await stored()).not.toContain(up.body.data.id);
  });

  it("an expired file answers 404 like an unknown one, and the sweeper removes its bytes", async () => {
    const up = answered(await uploadRaw(stack.edgeUrl, { key, size: 1000, headers: { "x-expires-in": "1", "x-filename": "short-lived.txt" } }));
    expect(up.status).toBe(201);
    const { id, download_url, share_url } = up.body.data;
    expect(await stored()).toContain(id);
    await until("expiry", async () => (await downloadRaw(download_url)).status === 404);
    const unknown = await downloadRaw(`${stack.edgeUrl}/v1/apps/file/download/${"x".repeat(43)}`);
    const expired = await downloadRaw(download_url);
    expect(JSON.parse(expired.text).message).toBe(JSON.parse(unknown.text).message);
    expect((await call(stack.edgeUrl, "GET", new URL(share_url).pathname)).status).toBe(404);
    await until("the sweeper", async () => !(await stored()).includes(id));
    const [row] = await stack.sql<{ state: string; token: string | null }>("files", "SELECT state, token FROM files WHERE id = $1", [id]);
    expect(row).toEqual({ state: "removed", token: null });
    const list = await call(stack.edgeUrl, "GET", "/v1/apps/file/list", { headers: { "x-api-key": key } });
    expect(list.body.data.find((f: { id: string }) => f.id === id)).toMatchObject({ status: "expired", download_url: null, share_url: null });
  });
});

describe("list, share and access", () => {
  it("lists only the caller tenant's files, newest first", async () => {
    const mine = answered(await uploadRaw(stack.edgeUrl, { key, size: 10, headers: { "x-filename": "mine.txt" } })).body.data;
    const theirs = answered(await uploadRaw(stack.edgeUrl, { key: otherKey, size: 10, headers: { "x-filename": "theirs.txt" } })).body.data;
    const a = await call(stack.edgeUrl, "GET", "/v1/apps/file/list", { headers: { "x-api-key": key } });
    const b = await call(stack.edgeUrl, "GET", "/v1/apps/file/list", { headers: { "x-api-key": otherKey } });
    expect(a.status).toBe(200);
    expect(a.body.data[0]).toMatchObject({ id: mine.id, filename: "mine.txt", status: "available", downloads: 0, download_url: mine.download_url });
    expect(a.body.data.map((f: { id: string }) => f.id)).not.toContain(theirs.id);
    expect(b.body.data.map((f: { id: string }) => f.id)).toEqual([theirs.id]);
    const times = a.body.data.map((f: { created_at: string }) => Date.parse(f.created_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
  });

  it("needs file:write to upload and file:read to list; no key is 401", async () => {
    const readOnly = (await createKey(stack, owner, { scopes: ["file:read"] })).key;
    const writeOnly = (await createKey(stack, owner, { scopes: ["file:write"] })).key;
    expect(answered(await uploadRaw(stack.edgeUrl, { key: readOnly, size: 10 })).status).toBe(403);
    expect(answered(await uploadRaw(stack.edgeUrl, { key: writeOnly, size: 10 })).status).toBe(201);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/file/list", { headers: { "x-api-key": writeOnly } })).status).toBe(403);
    expect((await call(stack.edgeUrl, "GET", "/v1/apps/file/list", { headers: { "x-api-key": readOnly } })).status).toBe(200);
    const anonymous = answered(await uploadRaw(stack.edgeUrl, { size: 5 * 1_048_576 }));
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe("unauthorized");
  });

  it.each([
    [{ "x-expires-in": "soon" }, "x-expires-in"],
    [{ "x-expires-in": "0" }, "x-expires-in"],
    [{ "x-expires-in": "99999999999" }, "x-expires-in"],
    [{ "x-max-downloads": "0" }, "x-max-downloads"],
    [{ "x-max-downloads": "-1" }, "x-max-downloads"],
    [{ "x-max-downloads": "1.5" }, "x-max-downloads"],
    [{ "x-filename": "../../etc/passwd" }, "x-filename"],
    [{ "x-filename": "UTF-8''..%2F..%2Fetc%2Fpasswd" }, "x-filename"],
    [{ "x-filename": "UTF-8''a%0D%0ASet-Cookie%3A%20x%3D1" }, "x-filename"],
    [{ "x-filename": "UTF-8''%E0%A4%A" }, "x-filename"],
  ])("400 for %j, naming the header", async (headers, name) => {
    const before = (await rows()).length;
    const res = answered(await uploadRaw(stack.edgeUrl, { key, size: 2 * 1_048_576, headers }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "invalid_request", message: expect.stringContaining(name), request_id: expect.any(String) });
    expect((await rows()).length).toBe(before);
  });

  it("a hostile filename cannot inject headers or markup", async () => {
    const name = 'r\u00e9sum\u00e9 "quoted"; x=<img src=x onerror=alert(1)>.txt';
    const up = answered(await uploadRaw(stack.edgeUrl, { key, size: 10, headers: { "x-filename": Buffer.from(name).toString("latin1") } }));
    expect(up.status).toBe(201);
    expect(up.body.data.filename).toBe(name);
    const dl = await downloadRaw(up.body.data.download_url);
    const cd = String(dl.headers["content-disposition"]);
    expect(cd).toBe(
      `attachment; filename="r_sum_ _quoted__ x=<img src=x onerror=alert(1)>.txt"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`,
    );
    expect(decodeURIComponent(cd.split("filename*=UTF-8''")[1]!)).toBe(name);

    const path = new URL(up.body.data.share_url).pathname;
    const json = await call(stack.edgeUrl, "GET", path);
    expect(json.status).toBe(200);
    expect(json.body.data).toEqual({
      filename: name,
      size: 10,
      sha256: up.body.data.sha256,
      content_type: "application/octet-stream",
      created_at: up.body.data.created_at,
      expires_at: up.body.data.expires_at,
      downloads_remaining: null,
      download_url: up.body.data.download_url,
    });
    const html = await call(stack.edgeUrl, "GET", path, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toMatch(/^text\/html/);
    expect(html.body).not.toContain("<img");
    expect(html.body).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(html.headers.get("content-security-policy")).toContain("default-src 'none'");
  });

  it("unknown tokens are 404 in the contract's shape on both public routes", async () => {
    for (const path of ["/v1/apps/file/download/nope", "/v1/apps/file/share/nope", `/v1/apps/file/download/${"A".repeat(43)}`]) {
      const res = await call(stack.edgeUrl, "GET", path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "not_found", message: expect.any(String), request_id: expect.any(String) });
    }
  });

  it("documents the routes in the OpenAPI document", async () => {
    const doc = (await call(stack.edgeUrl, "GET", "/openapi.json")).body;
    expect(doc.paths["/v1/apps/file/upload"].put["x-required-scope"]).toBe("file:write");
    expect(doc.paths["/v1/apps/file/upload"].post.requestBody.content["application/octet-stream"]).toBeDefined();
    expect(doc.paths["/v1/apps/file/list"].get["x-required-scope"]).toBe("file:read");
    expect(doc.paths["/v1/apps/file/download/{token}"].get.security).toEqual([]);
  });
});
