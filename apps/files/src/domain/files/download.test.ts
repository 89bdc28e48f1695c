import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "@gateway/errors";
import { openTestFiles, pattern, type TestFiles } from "../../testing/files-database.js";
import { downloadFile } from "./download.js";
import { getShare } from "./share.js";
import { listFiles } from "./list.js";
import { uploadFile } from "./upload.js";

let t: TestFiles;
beforeAll(async () => {
  t = await openTestFiles();
});
afterAll(async () => t?.close());

const upload = (over: Record<string, unknown> = {}, size = 1000) =>
  uploadFile({
    ctx: t.ctx,
    input: { tenant_id: "ten_a", filename: "a.bin", expires_in_seconds: 0, max_downloads: 0, declared_size: size, content_type: "", ...over },
    body: pattern(size),
  });

async function drain(body: NodeJS.ReadableStream): Promise<string> {
  const h = createHash("sha256");
  for await (const c of body) h.update(c as Buffer);
  return h.digest("hex");
}

const isGone = (e: unknown) => isAppError(e) && e.code === "not_found";

describe("downloadFile", () => {
  it("counts a download and streams the exact bytes", async () => {
    const file = await upload({}, 200_000);
    const d = await downloadFile({ ctx: t.ctx, input: { token: file.token! } });
    expect(d.file.downloads).toBe(1);
    expect(await drain(d.body)).toBe(file.sha256);
    expect((await t.events("file.downloaded")).at(-1)!.payload).toEqual({ file_id: file.id, tenant_id: "ten_a", downloads: 1, max_downloads: null });
  });

  it("with a limit of 1, exactly one of many concurrent downloads gets the bytes", async () => {
    const file = await upload({ max_downloads: 1 });
    const results = await Promise.allSettled(Array.from({ length: 25 }, () => downloadFile({ ctx: t.ctx, input: { token: file.token! } })));
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    expect(results.filter((r) => r.status === "rejected" && isGone(r.reason))).toHaveLength(24);
    for (const r of won) await drain((r as PromiseFulfilledResult<Awaited<ReturnType<typeof downloadFile>>>).value.body);
    const [row] = await t.sql<{ downloads: number }>("SELECT downloads FROM files WHERE id = $1", file.id);
    expect(row!.downloads).toBe(1);
    expect((await t.events("file.downloaded")).filter((e) => e.payload.file_id === file.id)).toHaveLength(1);
  });

  it("with a limit of 3, exactly three of many concurrent downloads succeed", async () => {
    const file = await upload({ max_downloads: 3 });
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => downloadFile({ ctx: t.ctx, input: { token: file.token! } })));
    const won = results.filter((r) => r.status === "fulfilled") as PromiseFulfilledResult<Awaited<ReturnType<typeof downloadFile>>>[];
    expect(won).toHaveLength(3);
    for (const r of won) r.value.body.destroy();
    expect(won.map((r) => r.value.file.downloads).sort()).toEqual([1, 2, 3]);
  });

  it("answers the same not_found for unknown, malformed, expired and exhausted tokens; share alike", async () => {
    const exhausted = await upload({ max_downloads: 1 });
    (await downloadFile({ ctx: t.ctx, input: { token: exhausted.token! } })).body.destroy();
    const expired = await upload({ expires_in_seconds: 1 });
    await t.sql("UPDATE files SET expires_at = now() - interval '1 second' WHERE id = $1", expired.id);
    const messages = new Set<string>();
    for (const token of [exhausted.token!, expired.token!, "A".repeat(43), "../../etc", ""]) {
      for (const call of [() => downloadFile({ ctx: t.ctx, input: { token } }), () => getShare({ ctx: t.ctx, input: { token } })]) {
        const err = await call().catch((e: unknown) => e);
        expect(isGone(err)).toBe(true);
        messages.add((err as Error).message);
      }
    }
    expect(messages.size).toBe(1);
  });

  it("share shows metadata without counting", async () => {
    const file = await upload({ max_downloads: 1 });
    for (let i = 0; i < 3; i++) expect((await getShare({ ctx: t.ctx, input: { token: file.token! } })).downloads).toBe(0);
  });
});

describe("listFiles", () => {
  it("lists a tenant's own files only, newest first, without uploads in progress", async () => {
    const mine = await upload({ tenant_id: "ten_list" });
    const theirs = await upload({ tenant_id: "ten_other" });
    const second = await upload({ tenant_id: "ten_list" });
    await t.sql("INSERT INTO files (id, tenant_id, filename, size, sha256, state) VALUES ('file_inprogress', 'ten_list', 'x', 0, '', 'uploading')");
    const list = (await listFiles({ ctx: t.ctx, input: { tenant_id: "ten_list" } })).items;
    expect(list.map((f) => f.id)).toEqual([second.id, mine.id]);
    expect(list.map((f) => f.id)).not.toContain(theirs.id);
    const first = await listFiles({ ctx: t.ctx, input: { tenant_id: "ten_list", limit: 1 } });
    expect(first.items.map((f) => f.id)).toEqual([second.id]);
    const third = await upload({ tenant_id: "ten_list" }); // at the head: the next page is unchanged
    const rest = await listFiles({ ctx: t.ctx, input: { tenant_id: "ten_list", limit: 1, cursor: first.nextCursor } });
    expect(rest).toMatchObject({ items: [{ id: mine.id }], nextCursor: "" });
    expect((await listFiles({ ctx: t.ctx, input: { tenant_id: "ten_list", limit: 1 } })).items[0]!.id).toBe(third.id);
  });
});
