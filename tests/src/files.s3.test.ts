import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadRaw, newTenant, patternSha, startStack, uploadRaw, type Stack } from "@gateway/testkit";
import { createKey } from "./keys-helpers.js";

// The files service on an S3-compatible store (s3rver on loopback over a temporary
// directory), as a multi-machine deployment runs it: multipart upload, streamed
// download, nothing left in the bucket by an aborted upload, the sweeper deletes objects.
let stack: Stack;
let s3: S3rver;
let s3Dir: string;
let key: string;

async function objects(): Promise<string[]> {
  const walk = async (d: string): Promise<string[]> => {
    const out: string[] = [];
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      if (e.isDirectory()) out.push(...(await walk(join(d, e.name))));
      else if (e.name.endsWith("_S3rver_object")) out.push(join(d, e.name).slice(s3Dir.length));
    }
    return out;
  };
  return (await walk(join(s3Dir, "gw-files"))).sort();
}

beforeAll(async () => {
  s3Dir = await mkdtemp(join(tmpdir(), "gw-s3rver-"));
  s3 = new S3rver({ address: "127.0.0.1", port: 0, directory: s3Dir, silent: true, configureBuckets: [{ name: "gw-files" }] });
  const { port } = await s3.run();
  stack = await startStack({
    services: ["files"],
    env: {
      files: {
        FILES_STORAGE: "s3",
        FILES_S3_ENDPOINT: `http://127.0.0.1:${port}`,
        FILES_S3_BUCKET: "gw-files",
        FILES_S3_ACCESS_KEY_ID: "S3RVER",
        FILES_S3_SECRET_ACCESS_KEY: "S3RVER",
        FILES_S3_PART_BYTES: String(5 * 1_048_576),
        FILES_SWEEP_INTERVAL_MS: "300",
      },
    },
  });
  key = (await createKey(stack, await newTenant(stack.edgeUrl, "files-s3"))).key;
}, 180_000);
afterAll(async () => {
  await stack?.shutdown();
  await s3?.close();
  await rm(s3Dir, { recursive: true, force: true });
});

describe("files on an S3-compatible store", () => {
  it("uploads in parts and downloads byte for byte", async () => {
    const size = 17 * 1_048_576 + 99; // four parts of 5 MiB
    const up = await uploadRaw(stack.edgeUrl, { key, size, seed: 13, chunked: true, headers: { "x-filename": "parts.bin" } });
    if ("aborted" in up) throw new Error("no answer");
    expect(up.status).toBe(201);
    expect(up.body.data.sha256).toBe(patternSha(size, 13));
    expect(await objects()).toEqual([expect.stringContaining(`files/${up.body.data.id}`)]);
    const dl = await downloadRaw(up.body.data.download_url);
    expect(dl.status).toBe(200);
    expect(dl.size).toBe(size);
    expect(dl.sha256).toBe(up.body.data.sha256);
  });

  it("an aborted upload leaves no object and no record", async () => {
    const before = await objects();
    const rows = await stack.sql("files", "SELECT id FROM files ORDER BY id");
    const r = await uploadRaw(stack.edgeUrl, { key, size: 20 * 1_048_576, abortAfter: 12 * 1_048_576 });
    expect("aborted" in r).toBe(true);
    const until = Date.now() + 20_000;
    while (Date.now() < until && JSON.stringify(await stack.sql("files", "SELECT id FROM files ORDER BY id")) !== JSON.stringify(rows)) {
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(await stack.sql("files", "SELECT id FROM files ORDER BY id")).toEqual(rows);
    expect(await objects()).toEqual(before);
    expect(stack.process("files").running).toBe(true);
  });

  it("the sweeper deletes the object of an expired file", async () => {
    const up = await uploadRaw(stack.edgeUrl, { key, size: 1000, headers: { "x-expires-in": "1" } });
    if ("aborted" in up) throw new Error("no answer");
    const id = up.body.data.id as string;
    expect((await objects()).some((o) => o.includes(id))).toBe(true);
    const until = Date.now() + 20_000;
    // The sweeper deletes the object, then commits the row's new state: wait for both.
    const state = async () => (await stack.sql<{ state: string }>("files", "SELECT state FROM files WHERE id = $1", [id]))[0]?.state;
    while (Date.now() < until && ((await objects()).some((o) => o.includes(id)) || (await state()) !== "removed"))
      await new Promise((res) => setTimeout(res, 100));
    expect((await objects()).some((o) => o.includes(id))).toBe(false);
    const [row] = await stack.sql<{ state: string }>("files", "SELECT state FROM files WHERE id = $1", [id]);
    expect(row!.state).toBe("removed");
  });
});
