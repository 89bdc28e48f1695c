import { readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, newTenant, signIn, startStack, uploadRaw, type Stack, type UploadResult } from "@gateway/testkit";
import { createKey, type Tenant } from "./keys-helpers.js";

// Defaults of this stack: 1,000,000 bytes and 3 files per tenant.
const BYTES = 1_000_000;
const FILES = 3;

let stack: Stack;
let adminToken: string;

beforeAll(async () => {
  stack = await startStack({
    services: ["files"],
    env: { files: { TENANT_STORAGE_BYTES_QUOTA: String(BYTES), TENANT_FILES_QUOTA: String(FILES), FILES_SWEEP_INTERVAL_MS: "300" } },
  });
  adminToken = await signIn(stack.edgeUrl, stack.admin.email, stack.admin.password);
}, 180_000);
afterAll(async () => stack?.shutdown());

async function tenantWithKey(label: string): Promise<{ tenant: Tenant; key: string }> {
  const tenant = await newTenant(stack.edgeUrl, label);
  return { tenant, key: (await createKey(stack, tenant)).key };
}

function answered(r: UploadResult): { status: number; body: any } {
  if ("aborted" in r) throw new Error(`the upload got no answer: ${r.error ?? "aborted"}`);
  return r;
}

const upload = async (key: string, size: number, options: { chunked?: boolean; headers?: Record<string, string> } = {}) =>
  answered(await uploadRaw(stack.edgeUrl, { key, size, ...options }));

async function quotaOf(tenant: Tenant) {
  const res = await call(stack.edgeUrl, "GET", "/console/files/quota", { token: tenant.token });
  expect(res.status).toBe(200);
  return res.body.data as { bytes_limit: number; bytes_used: number; files_limit: number; files_used: number };
}

/** Records and stored objects (complete and partial), to show that a refusal left nothing. */
async function leftovers() {
  const dir = join(tmpdir(), `gw-${stack.runId}-files`);
  const top = (await readdir(dir).catch(() => [])).filter((n) => n !== ".partial");
  const partial = (await readdir(join(dir, ".partial")).catch(() => [])).map((n) => `.partial/${n}`);
  const rows = await stack.sql<{ id: string }>("files", "SELECT id FROM files ORDER BY id");
  return { rows: rows.map((r) => r.id), stored: [...top, ...partial].sort() };
}

describe("storage quota through the edge", () => {
  it("GET /console/files/quota shows the limits and what the tenant's files use", async () => {
    const { tenant, key } = await tenantWithKey("quota-view");
    expect(await quotaOf(tenant)).toEqual({ bytes_limit: BYTES, bytes_used: 0, files_limit: FILES, files_used: 0 });
    expect((await upload(key, 250_000)).status).toBe(201);
    expect(await quotaOf(tenant)).toEqual({ bytes_limit: BYTES, bytes_used: 250_000, files_limit: FILES, files_used: 1 });
    expect((await call(stack.edgeUrl, "GET", "/console/files/quota")).status).toBe(401);
  });

  it("an upload that does not fit the bytes left gets 413 with the quota, declared or counted, and leaves nothing", async () => {
    const { tenant, key } = await tenantWithKey("quota-bytes");
    expect((await upload(key, 600_000)).status).toBe(201);
    const before = await leftovers();
    const quota = { bytes_limit: BYTES, bytes_used: 600_000, files_limit: FILES, files_used: 1 };
    for (const chunked of [false, true]) {
      const res = await upload(key, 400_001, { chunked });
      expect(res.status).toBe(413);
      expect(res.body).toEqual({ error: "payload_too_large", message: expect.stringContaining("quota"), request_id: expect.any(String), quota });
    }
    expect(await leftovers()).toEqual(before);
    expect(await quotaOf(tenant)).toEqual(quota);
    expect((await upload(key, 400_000)).status).toBe(201);
  });

  it("an upload past the file count gets 409 conflict with the quota", async () => {
    const { key } = await tenantWithKey("quota-count");
    for (let i = 0; i < FILES; i++) expect((await upload(key, 10)).status).toBe(201);
    const before = await leftovers();
    const res = await upload(key, 10);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: "conflict",
      message: expect.stringContaining("quota"),
      request_id: expect.any(String),
      quota: { bytes_limit: BYTES, bytes_used: 30, files_limit: FILES, files_used: FILES },
    });
    expect(await leftovers()).toEqual(before);
  });

  it("concurrent uploads racing for the last bytes never pass the quota together", async () => {
    const { tenant, key } = await tenantWithKey("quota-race");
    const results = await Promise.all(Array.from({ length: 6 }, () => upload(key, 400_000, { chunked: true })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 413, 413, 413, 413]);
    expect(await quotaOf(tenant)).toMatchObject({ bytes_used: 800_000, files_used: 2 });
    const [held] = await stack.sql<{ bytes: string }>(
      "files",
      "SELECT COALESCE(SUM(size), 0)::text AS bytes FROM files WHERE tenant_id = $1 AND state = 'ready'",
      [tenant.tenantId],
    );
    expect(Number(held!.bytes)).toBe(800_000);
  });

  it("an expired file gives its space back once the sweeper removed it", async () => {
    const { tenant, key } = await tenantWithKey("quota-expiry");
    expect((await upload(key, 900_000, { headers: { "x-expires-in": "1" } })).status).toBe(201);
    expect((await upload(key, 200_000)).status).toBe(413);
    const end = Date.now() + 15_000;
    while ((await quotaOf(tenant)).bytes_used !== 0) {
      if (Date.now() > end) throw new Error("the expired file's space never came back");
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await quotaOf(tenant)).toEqual({ bytes_limit: BYTES, bytes_used: 0, files_limit: FILES, files_used: 0 });
    expect((await upload(key, 200_000)).status).toBe(201);
  });
});

describe("operator override: /ops/files/tenants/{tenant_id}/quota", () => {
  it("a platform admin sets a tenant's own limits and returns them to the default with null", async () => {
    const { tenant, key } = await tenantWithKey("quota-ops");
    expect((await upload(key, 900_000)).status).toBe(201);
    expect((await upload(key, 200_000)).status).toBe(413);

    const path = `/ops/files/tenants/${tenant.tenantId}/quota`;
    const set = await call(stack.edgeUrl, "PUT", path, { token: adminToken, body: { bytes_quota: 5_000_000 } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ data: { tenant_id: tenant.tenantId, bytes_limit: 5_000_000, bytes_used: 900_000, files_limit: FILES, files_used: 1 } });
    expect((await upload(key, 200_000)).status).toBe(201);
    expect(await quotaOf(tenant)).toEqual({ bytes_limit: 5_000_000, bytes_used: 1_100_000, files_limit: FILES, files_used: 2 });

    const files = await call(stack.edgeUrl, "PUT", path, { token: adminToken, body: { files_quota: 2 } });
    expect(files.body.data).toMatchObject({ bytes_limit: 5_000_000, files_limit: 2 });
    expect((await upload(key, 1)).status).toBe(409);

    const reset = await call(stack.edgeUrl, "PUT", path, { token: adminToken, body: { bytes_quota: null, files_quota: null } });
    expect(reset.body.data).toEqual({ tenant_id: tenant.tenantId, bytes_limit: BYTES, bytes_used: 1_100_000, files_limit: FILES, files_used: 2 });
    // Over the default now: the files stay, new bytes are refused.
    expect((await upload(key, 1)).status).toBe(413);
    expect((await call(stack.edgeUrl, "GET", path, { token: adminToken })).body).toEqual(reset.body);
  });

  it("refuses bad bodies with 400, unknown tenants with 404, and anyone but an operator with 403", async () => {
    const { tenant } = await tenantWithKey("quota-ops-errors");
    const path = `/ops/files/tenants/${tenant.tenantId}/quota`;
    for (const body of [{ bytes_quota: -1 }, { files_quota: 1.5 }, { files_quota: 2_147_483_648 }, { bytes_quota: "10" }, { bytes: 10 }]) {
      const res = await call(stack.edgeUrl, "PUT", path, { token: adminToken, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: "invalid_request", request_id: expect.any(String) });
    }
    const unknown = await call(stack.edgeUrl, "PUT", "/ops/files/tenants/ten_nobody/quota", { token: adminToken, body: { files_quota: 5 } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("not_found");
    const self = await call(stack.edgeUrl, "PUT", path, { token: tenant.token, body: { files_quota: 1_000 } });
    expect(self.status).toBe(403);
    expect(self.body.error).toBe("forbidden");
    expect(await quotaOf(tenant)).toMatchObject({ files_limit: FILES });
  });

  it("the OpenAPI document describes the quota routes and the quota in upload refusals", async () => {
    const doc = (await call(stack.edgeUrl, "GET", "/openapi.json")).body;
    expect(doc.paths["/console/files/quota"].get.responses["200"].content["application/json"].schema.properties.data.required).toEqual([
      "bytes_limit",
      "bytes_used",
      "files_limit",
      "files_used",
    ]);
    expect(Object.keys(doc.paths["/ops/files/tenants/{tenant_id}/quota"]).sort()).toEqual(["get", "put"]);
    for (const status of ["409", "413"]) {
      expect(doc.paths["/v1/apps/file/upload"].put.responses[status].content["application/json"].schema.properties).toHaveProperty("quota");
    }
  });
});
