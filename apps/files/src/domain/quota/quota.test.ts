import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError, type AppError } from "@gateway/errors";
import { openTestFiles, pattern, type TestFiles } from "../../testing/files-database.js";
import { downloadFile } from "../files/download.js";
import { sweepFiles } from "../files/sweep.js";
import { uploadFile } from "../files/upload.js";
import { getQuota } from "./get.js";
import { updateQuota } from "./update.js";

// Defaults of this suite: 1000 bytes and 3 files per tenant; each test takes a fresh tenant.
let t: TestFiles;
beforeAll(async () => {
  t = await openTestFiles({ tenantBytesQuota: 1000, tenantFilesQuota: 3 });
});
afterAll(async () => t?.close());

const tenant = () => `ten_${randomBytes(4).toString("hex")}`;
const sweep = { batch: 50, exhaustedGraceSeconds: 0, staleUploadSeconds: 3600 };

function upload(tenantId: string, size: number, over: Record<string, unknown> = {}, body: AsyncIterable<Uint8Array> = pattern(size, { piece: 100 })) {
  const input = { tenant_id: tenantId, filename: "q.bin", expires_in_seconds: 0, max_downloads: 0, declared_size: -1, content_type: "", ...over };
  return uploadFile({ ctx: t.ctx, input, body });
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isAppError(err)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

const quotaOf = (tenantId: string) => getQuota({ ctx: t.ctx, input: { tenant_id: tenantId } });

/** What the tenant's ready files really hold, to compare with the counters. */
async function held(tenantId: string) {
  const [row] = await t.sql<{ bytes: string; files: number }>(
    "SELECT COALESCE(SUM(size), 0)::text AS bytes, COUNT(*)::int AS files FROM files WHERE tenant_id = $1 AND state = 'ready'",
    tenantId,
  );
  return { bytes_used: Number(row!.bytes), files_used: row!.files };
}

/** Rows and stored objects now, to show that a refusal left nothing. */
async function snapshot() {
  return { rows: await t.sql("SELECT id, state FROM files ORDER BY id"), names: (await t.storedNames()).sort() };
}

/** A body that sends nothing until `n` bodies have begun: every upload has read the quota before any commits. */
function barrier(n: number) {
  let started = 0;
  let open!: () => void;
  const all = new Promise<void>((r) => (open = r));
  return async function* (size: number) {
    if (++started === n) open();
    await all;
    yield* pattern(size, { piece: 100 });
  };
}

describe("storage quota", () => {
  it("a tenant that stored nothing uses nothing, under the defaults", async () => {
    expect(await quotaOf(tenant())).toEqual({ bytes_limit: 1000, bytes_used: 0, files_limit: 3, files_used: 0 });
  });

  it("counts ready files; an upload that cannot fit the bytes left gets 413 with the quota and leaves nothing", async () => {
    const ten = tenant();
    await upload(ten, 600);
    expect(await quotaOf(ten)).toEqual({ bytes_limit: 1000, bytes_used: 600, files_limit: 3, files_used: 1 });
    const before = await snapshot();
    const quota = { bytes_limit: 1000, bytes_used: 600, files_limit: 3, files_used: 1 };
    // Declared too large: refused before a record exists.
    const declared = await refusal(upload(ten, 401, { declared_size: 401 }));
    expect(declared.code).toBe("payload_too_large");
    expect(declared.extra).toEqual({ quota });
    // Declared small (or not at all), counted too large: refused while streaming.
    for (const declared_size of [-1, 10]) {
      const counted = await refusal(upload(ten, 401, { declared_size }));
      expect(counted.code).toBe("payload_too_large");
      expect(counted.extra).toEqual({ quota });
    }
    expect(await snapshot()).toEqual(before);
    expect(await quotaOf(ten)).toEqual(quota);
    // Exactly what is left fits.
    await upload(ten, 400);
    expect(await quotaOf(ten)).toMatchObject({ bytes_used: 1000, files_used: 2 });
    expect((await refusal(upload(ten, 1))).code).toBe("payload_too_large");
    expect(await held(ten)).toEqual({ bytes_used: 1000, files_used: 2 });
  });

  it("refuses an upload past the file count with 409 and the quota, before storing anything", async () => {
    const ten = tenant();
    for (let i = 0; i < 3; i++) await upload(ten, 0);
    const before = await snapshot();
    const err = await refusal(upload(ten, 10));
    expect(err.code).toBe("conflict");
    expect(err.extra).toEqual({ quota: { bytes_limit: 1000, bytes_used: 0, files_limit: 3, files_used: 3 } });
    expect(await snapshot()).toEqual(before);
  });

  it("uploads racing for the last bytes never pass the quota together", async () => {
    const ten = tenant();
    await updateQuota({ ctx: t.ctx, input: { tenant_id: ten, files_quota: 100 } });
    await upload(ten, 100);
    const body = barrier(8);
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => upload(ten, 400, { declared_size: 400 }, body(400))));
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    expect(won).toHaveLength(2);
    expect(lost.map((e) => isAppError(e) && e.code)).toEqual(Array(6).fill("payload_too_large"));
    expect(await quotaOf(ten)).toEqual({ bytes_limit: 1000, bytes_used: 900, files_limit: 100, files_used: 3 });
    expect(await held(ten)).toEqual({ bytes_used: 900, files_used: 3 });
    // The losers left no record and no bytes.
    const ids = (await t.sql<{ id: string }>("SELECT id FROM files WHERE tenant_id = $1", ten)).map((r) => r.id).sort();
    expect(ids).toHaveLength(3);
    const names = await t.storedNames();
    expect(names.filter((n) => n.startsWith(".partial/"))).toEqual([]);
  });

  it("uploads racing for the last file slot never pass the count together", async () => {
    const ten = tenant();
    await upload(ten, 1);
    const body = barrier(6);
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => upload(ten, 10, {}, body(10))));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    expect(results.flatMap((r) => (r.status === "rejected" && isAppError(r.reason) ? [r.reason.code] : []))).toEqual(Array(4).fill("conflict"));
    expect(await quotaOf(ten)).toMatchObject({ bytes_used: 21, files_used: 3 });
    expect(await held(ten)).toEqual({ bytes_used: 21, files_used: 3 });
  });

  it("expired and exhausted files give their space back when the sweeper removes them", async () => {
    const ten = tenant();
    const old = await upload(ten, 500);
    const once = await upload(ten, 300, { max_downloads: 1 });
    await upload(ten, 100);
    expect((await refusal(upload(ten, 200))).code).toBe("conflict");
    await t.sql("UPDATE files SET expires_at = now() - interval '1 second' WHERE id = $1", old.id);
    (await downloadFile({ ctx: t.ctx, input: { token: once.token! } })).body.destroy();
    await t.sql("UPDATE files SET last_download_at = now() - interval '1 second' WHERE id = $1", once.id);
    await sweepFiles({ ctx: t.ctx, input: sweep });
    expect(await quotaOf(ten)).toEqual({ bytes_limit: 1000, bytes_used: 100, files_limit: 3, files_used: 1 });
    expect(await held(ten)).toEqual({ bytes_used: 100, files_used: 1 });
    await upload(ten, 900);
    expect(await quotaOf(ten)).toMatchObject({ bytes_used: 1000, files_used: 2 });
  });

  it("a failed upload never counts", async () => {
    const ten = tenant();
    await expect(upload(ten, 500, {}, pattern(500, { failAfter: 200, piece: 100 }))).rejects.toThrow();
    expect(await quotaOf(ten)).toMatchObject({ bytes_used: 0, files_used: 0 });
  });
});

describe("updateQuota", () => {
  it("sets a tenant's own limits, leaves an absent one alone, and -1 returns to the default", async () => {
    const ten = tenant();
    await upload(ten, 700);
    expect(await updateQuota({ ctx: t.ctx, input: { tenant_id: ten, bytes_quota: 5000 } })).toEqual({
      bytes_limit: 5000,
      bytes_used: 700,
      files_limit: 3,
      files_used: 1,
    });
    expect(await updateQuota({ ctx: t.ctx, input: { tenant_id: ten, files_quota: 10 } })).toEqual({
      bytes_limit: 5000,
      bytes_used: 700,
      files_limit: 10,
      files_used: 1,
    });
    await upload(ten, 2000);
    expect(await updateQuota({ ctx: t.ctx, input: { tenant_id: ten, bytes_quota: -1 } })).toEqual({
      bytes_limit: 1000,
      bytes_used: 2700,
      files_limit: 10,
      files_used: 2,
    });
    // Over the limit now: the files stay, new uploads are refused until enough are gone.
    expect((await refusal(upload(ten, 1))).code).toBe("payload_too_large");
    expect(await held(ten)).toEqual({ bytes_used: 2700, files_used: 2 });
  });

  it("a limit of 0 refuses every upload; a tenant never seen gets a row", async () => {
    const ten = tenant();
    expect(await updateQuota({ ctx: t.ctx, input: { tenant_id: ten, files_quota: 0 } })).toMatchObject({ files_limit: 0, files_used: 0 });
    expect((await refusal(upload(ten, 0))).code).toBe("conflict");
  });

  it.each([{ bytes_quota: -2 }, { files_quota: 2_147_483_648 }, { bytes_quota: 1.5 }, { tenant_id: "bad id" }])(
    "refuses %j with invalid_request",
    async (bad) => {
      const err = await refusal(updateQuota({ ctx: t.ctx, input: { tenant_id: tenant(), ...bad } }));
      expect(err.code).toBe("invalid_request");
    },
  );
});
