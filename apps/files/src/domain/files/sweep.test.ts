import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestFiles, pattern, type TestFiles } from "../../testing/files-database.js";
import { downloadFile } from "./download.js";
import { sweepFiles } from "./sweep.js";
import { uploadFile } from "./upload.js";

let t: TestFiles;
beforeAll(async () => {
  t = await openTestFiles();
});
afterAll(async () => t?.close());

const input = { batch: 7, exhaustedGraceSeconds: 3600, staleUploadSeconds: 3600 };
const upload = (over: Record<string, unknown> = {}) =>
  uploadFile({
    ctx: t.ctx,
    input: { tenant_id: "ten_s", filename: "s.bin", expires_in_seconds: 0, max_downloads: 0, declared_size: -1, content_type: "", ...over },
    body: pattern(5000),
  });
const expire = (ids: string[]) => t.sql("UPDATE files SET expires_at = now() - interval '1 second' WHERE id = ANY($1)", ids);

describe("sweepFiles", () => {
  it("removes the bytes of expired files, keeps their records as removed, and leaves live ones alone", async () => {
    const live = await upload();
    const old = await upload();
    await expire([old.id]);
    expect(await sweepFiles({ ctx: t.ctx, input })).toEqual({ expired: 1, exhausted: 0, abandoned: 0 });
    const rows = await t.sql<{ id: string; state: string; removed_reason: string | null; token: string | null }>(
      "SELECT id, state, removed_reason, token FROM files WHERE id = ANY($1) ORDER BY id",
      [live.id, old.id],
    );
    expect(rows.find((r) => r.id === old.id)).toMatchObject({ state: "removed", removed_reason: "expired", token: null });
    expect(rows.find((r) => r.id === live.id)).toMatchObject({ state: "ready" });
    expect(await t.storedNames()).not.toContain(old.id);
    expect(await t.storedNames()).toContain(live.id);
    expect((await t.events("file.removed")).map((e) => e.payload)).toContainEqual({ file_id: old.id, tenant_id: "ten_s", reason: "expired" });
    expect(await sweepFiles({ ctx: t.ctx, input })).toEqual({ expired: 0, exhausted: 0, abandoned: 0 });
  });

  it("removes exhausted files after the grace period only", async () => {
    const file = await upload({ max_downloads: 1 });
    (await downloadFile({ ctx: t.ctx, input: { token: file.token! } })).body.destroy();
    expect((await sweepFiles({ ctx: t.ctx, input })).exhausted).toBe(0);
    expect((await sweepFiles({ ctx: t.ctx, input: { ...input, exhaustedGraceSeconds: 0 } })).exhausted).toBe(1);
    expect(await t.storedNames()).not.toContain(file.id);
  });

  it("deletes uploads abandoned by a process that died (record and partial bytes)", async () => {
    await t.sql(
      "INSERT INTO files (id, tenant_id, filename, size, sha256, state, created_at) VALUES ('file_dead', 'ten_s', 'x', 0, '', 'uploading', now() - interval '2 hours')",
    );
    await t.sql("INSERT INTO files (id, tenant_id, filename, size, sha256, state) VALUES ('file_busy', 'ten_s', 'x', 0, '', 'uploading')");
    expect((await sweepFiles({ ctx: t.ctx, input })).abandoned).toBe(1);
    expect((await t.sql<{ id: string }>("SELECT id FROM files WHERE id IN ('file_dead', 'file_busy')")).map((r) => r.id)).toEqual(["file_busy"]);
  });

  it("two sweepers running at once remove every expired file exactly once", async () => {
    const files = await Promise.all(Array.from({ length: 30 }, () => upload()));
    await expire(files.map((f) => f.id));
    const before = (await t.events("file.removed")).length;
    const [a, b] = await Promise.all([sweepFiles({ ctx: t.ctx, input }), sweepFiles({ ctx: t.ctx, input })]);
    expect(a.expired + b.expired).toBe(30);
    const events = (await t.events("file.removed")).slice(before);
    expect(events).toHaveLength(30);
    expect(new Set(events.map((e) => e.payload.file_id)).size).toBe(30);
    const names = await t.storedNames();
    for (const f of files) expect(names).not.toContain(f.id);
  });
});
