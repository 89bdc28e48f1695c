import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAppError } from "@gateway/errors";
import { openTestFiles, pattern, type TestFiles } from "../../testing/files-database.js";
import { uploadFile } from "./upload.js";

let t: TestFiles;
beforeAll(async () => {
  t = await openTestFiles({ maxBytes: 1_048_576 });
});
afterAll(async () => t?.close());

const start = (over: Record<string, unknown> = {}) => ({
  tenant_id: "ten_a",
  filename: "report.pdf",
  expires_in_seconds: 0,
  max_downloads: 0,
  declared_size: -1,
  content_type: "application/pdf",
  ...over,
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isAppError(err)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err.code;
}

async function sha(total: number, seed = 1): Promise<string> {
  const h = createHash("sha256");
  for await (const c of pattern(total, { seed })) h.update(c);
  return h.digest("hex");
}

describe("uploadFile", () => {
  it("streams the bytes into the store, hashes them and makes the file ready with its event", async () => {
    const file = await uploadFile({ ctx: t.ctx, input: start({ expires_in_seconds: 120, max_downloads: 2 }), body: pattern(300_000, { seed: 3 }) });
    expect(file).toMatchObject({ tenantId: "ten_a", filename: "report.pdf", size: 300_000n, state: "ready", maxDownloads: 2, contentType: "application/pdf" });
    expect(file.sha256).toBe(await sha(300_000, 3));
    expect(file.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ttl = (file.expiresAt!.getTime() - file.createdAt.getTime()) / 1000;
    expect(ttl).toBe(120);
    expect(await t.storedNames()).toContain(file.id);
    const events = await t.events("file.uploaded");
    expect(events.at(-1)!.payload).toEqual({
      file_id: file.id,
      tenant_id: "ten_a",
      size: "300000",
      sha256: file.sha256,
      expires_at: file.expiresAt!.toISOString(),
      max_downloads: 2,
    });
    expect(JSON.stringify(events)).not.toContain(file.token!);
  });

  it("uses the defaults: name `file`, the default lifetime, unlimited downloads, octet-stream for form types", async () => {
    const file = await uploadFile({ ctx: t.ctx, input: start({ filename: "", content_type: "application/x-www-form-urlencoded" }), body: pattern(10) });
    expect(file.filename).toBe("file");
    expect(file.maxDownloads).toBeNull();
    expect(file.contentType).toBe("application/octet-stream");
    expect((file.expiresAt!.getTime() - file.createdAt.getTime()) / 1000).toBe(3_600);
  });

  it("accepts an empty file", async () => {
    const file = await uploadFile({ ctx: t.ctx, input: start(), body: pattern(0) });
    expect(file.size).toBe(0n);
    expect(file.sha256).toBe(createHash("sha256").digest("hex"));
  });

  it("refuses a declared size above the limit before storing anything", async () => {
    const before = await t.sql("SELECT id FROM files");
    expect(await codeOf(uploadFile({ ctx: t.ctx, input: start({ declared_size: 1_048_577 }), body: pattern(10) }))).toBe("payload_too_large");
    expect(await t.sql("SELECT id FROM files")).toEqual(before);
  });

  it("counts the bytes: a body larger than the limit (declared small or not at all) is refused and leaves nothing", async () => {
    const rows = await t.sql("SELECT id FROM files");
    const names = await t.storedNames();
    for (const declared of [-1, 100]) {
      expect(await codeOf(uploadFile({ ctx: t.ctx, input: start({ declared_size: declared }), body: pattern(1_048_577) }))).toBe("payload_too_large");
    }
    expect(await t.sql("SELECT id FROM files")).toEqual(rows);
    expect(await t.storedNames()).toEqual(names);
    // Exactly the limit is fine.
    const ok = await uploadFile({ ctx: t.ctx, input: start(), body: pattern(1_048_576) });
    expect(ok.size).toBe(1_048_576n);
  });

  it("leaves no file and no record when the body fails part-way (client gone)", async () => {
    const rows = await t.sql("SELECT id FROM files");
    const names = await t.storedNames();
    const events = (await t.events()).length;
    await expect(uploadFile({ ctx: t.ctx, input: start(), body: pattern(500_000, { failAfter: 200_000 }) })).rejects.toThrow();
    expect(await t.sql("SELECT id FROM files")).toEqual(rows);
    expect(await t.storedNames()).toEqual(names);
    expect((await t.events()).length).toBe(events);
  });

  it("leaves nothing when the caller's signal aborts mid-body", async () => {
    const rows = await t.sql("SELECT id FROM files");
    const names = await t.storedNames();
    const controller = new AbortController();
    async function* slow() {
      let n = 0;
      for await (const c of pattern(800_000)) {
        n += c.length;
        if (n > 300_000) controller.abort();
        yield c;
      }
    }
    await expect(uploadFile({ ctx: t.ctx, input: start(), body: slow(), signal: controller.signal })).rejects.toThrow();
    expect(await t.sql("SELECT id FROM files")).toEqual(rows);
    expect(await t.storedNames()).toEqual(names);
  });

  it.each([
    ["../../etc/passwd", "x-filename"],
    ["a/b.txt", "x-filename"],
    ["a\\b.txt", "x-filename"],
    ["..", "x-filename"],
    ["evil\r\nSet-Cookie: x=1", "x-filename"],
    ["name\u0000.txt", "x-filename"],
    ["invoice\u202Efdp.exe", "x-filename"],
    [" padded ", "x-filename"],
    ["x".repeat(256), "x-filename"],
  ])("refuses the filename %j with a 400 naming %s", async (filename, header) => {
    const err = await uploadFile({ ctx: t.ctx, input: start({ filename }), body: pattern(1) }).catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe("invalid_request");
    expect((err as Error).message).toContain(header);
  });

  it("accepts ordinary and non-ASCII names as they are", async () => {
    for (const filename of ["résumé 2026.pdf", "отчёт.txt", "a;b\"c'.txt", "x".repeat(255)]) {
      const file = await uploadFile({ ctx: t.ctx, input: start({ filename }), body: pattern(1) });
      expect(file.filename).toBe(filename);
    }
  });

  it("refuses lifetimes and download limits out of range", async () => {
    expect(await codeOf(uploadFile({ ctx: t.ctx, input: start({ expires_in_seconds: 86_401 }), body: pattern(1) }))).toBe("invalid_request");
    expect(await codeOf(uploadFile({ ctx: t.ctx, input: start({ expires_in_seconds: -5 }), body: pattern(1) }))).toBe("invalid_request");
    expect(await codeOf(uploadFile({ ctx: t.ctx, input: start({ max_downloads: 1_000_001 }), body: pattern(1) }))).toBe("invalid_request");
    expect(await codeOf(uploadFile({ ctx: t.ctx, input: start({ max_downloads: -1 }), body: pattern(1) }))).toBe("invalid_request");
  });
});
