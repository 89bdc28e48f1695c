import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalStore } from "./local.js";
import { S3Store } from "./s3.js";
import { BlobNotFound, type BlobStore } from "./store.js";

/** `total` bytes of a seeded pattern, produced in 64 KiB pieces (never held whole). */
function bytes(total: number, seed = 1, failAfter?: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && sent >= failAfter) return this.destroy(new Error("client went away"));
      if (sent >= total) return this.push(null);
      const n = Math.min(65_536, total - sent);
      const chunk = Buffer.alloc(n);
      for (let i = 0; i < n; i++) chunk[i] = ((sent + i) * seed) & 0xff;
      sent += n;
      this.push(chunk);
    },
  });
}

async function digest(stream: Readable): Promise<{ sha: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha: hash.digest("hex"), size };
}

const id = () => `file_${randomBytes(8).toString("hex")}`;

type Fixture = { store: BlobStore; leftovers(): Promise<string[]>; close(): Promise<void> };

async function localFixture(): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), "files-local-"));
  return {
    store: new LocalStore(dir),
    leftovers: async () => [...(await readdir(dir)).filter((n) => n !== ".partial"), ...(await readdir(join(dir, ".partial")).catch(() => []))],
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

async function s3Fixture(): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), "files-s3rver-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory: dir, silent: true, configureBuckets: [{ name: "test-bucket" }] });
  const { port } = await server.run();
  const store = new S3Store({
    bucket: "test-bucket",
    prefix: "files/",
    region: "us-east-1",
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    partBytes: 5 * 1_048_576,
  });
  const walk = async (d: string): Promise<string[]> => {
    const out: string[] = [];
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) out.push(...(await walk(join(d, e.name))));
      else out.push(join(d, e.name));
    }
    return out;
  };
  return {
    store,
    // Object files of the bucket (s3rver keeps each object as `<key>._S3rver_object` plus metadata files).
    leftovers: async () => (await walk(join(dir, "test-bucket")).catch(() => [])).filter((p) => p.endsWith("_S3rver_object")),
    async close() {
      store.client.destroy();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describe.each([
  ["local directory", localFixture],
  ["S3 (s3rver)", s3Fixture],
])("BlobStore: %s", (_name, open) => {
  let f: Fixture;
  beforeAll(async () => {
    f = await open();
  });
  afterAll(async () => f?.close());

  it("stores and streams back a multi-part object byte for byte", async () => {
    const key = id();
    const size = 12 * 1_048_576 + 123; // three parts of 5 MiB on S3
    const expected = await digest(bytes(size, 7));
    await f.store.put(key, bytes(size, 7));
    expect(await f.store.exists(key)).toBe(true);
    const got = await f.store.get(key);
    expect(got.size).toBe(size);
    expect(await digest(got.body)).toEqual(expected);
    // The leftover probe sees stored objects (so its emptiness below means something).
    expect((await f.leftovers()).length).toBeGreaterThan(0);
  });

  it("stores an empty object", async () => {
    const key = id();
    await f.store.put(key, bytes(0));
    const got = await f.store.get(key);
    expect(got.size).toBe(0);
    expect((await digest(got.body)).size).toBe(0);
  });

  it("leaves nothing when the body fails part-way", async () => {
    const before = await f.leftovers();
    const key = id();
    await expect(f.store.put(key, bytes(11 * 1_048_576, 3, 6 * 1_048_576))).rejects.toThrow();
    expect(await f.store.exists(key)).toBe(false);
    await expect(f.store.get(key)).rejects.toBeInstanceOf(BlobNotFound);
    expect(await f.leftovers()).toEqual(before);
  });

  it("leaves nothing when the upload is aborted", async () => {
    const before = await f.leftovers();
    const key = id();
    const controller = new AbortController();
    const body = bytes(20 * 1_048_576, 5);
    let seen = 0;
    body.on("data", (c: Buffer) => {
      seen += c.length;
      if (seen > 2 * 1_048_576 && !controller.signal.aborted) controller.abort();
    });
    await expect(f.store.put(key, body, controller.signal)).rejects.toThrow();
    expect(await f.store.exists(key)).toBe(false);
    expect(await f.leftovers()).toEqual(before);
  });

  it("deletes, and deleting a missing object is fine", async () => {
    const key = id();
    await f.store.put(key, bytes(1000));
    await f.store.delete(key);
    expect(await f.store.exists(key)).toBe(false);
    await expect(f.store.get(key)).rejects.toBeInstanceOf(BlobNotFound);
    await f.store.delete(key);
    await f.store.delete(id());
  });

  it("refuses keys that are not ids (no path can be named)", async () => {
    for (const bad of ["../etc/passwd", "a/b", "", ".", "..", "x".repeat(129)]) {
      await expect(f.store.put(bad, bytes(1))).rejects.toThrow(/invalid blob key/);
      await expect(f.store.get(bad)).rejects.toThrow(/invalid blob key/);
    }
  });
});
