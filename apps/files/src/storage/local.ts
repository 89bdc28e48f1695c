import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, rename, rm, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { BlobNotFound, checkKey, type BlobStore } from "./store.js";

/**
 * A directory on this machine: `<dir>/<key>` for complete objects, written
 * first to `<dir>/.partial/<key>` and renamed into place once whole (a rename
 * within one file system is atomic, so readers never see half a file).
 */
export class LocalStore implements BlobStore {
  readonly kind = "local";
  private readonly dir: string;
  private readonly partialDir: string;
  private ready: Promise<void> | undefined;

  constructor(dir: string) {
    this.dir = resolve(dir);
    this.partialDir = join(this.dir, ".partial");
  }

  private prepare(): Promise<void> {
    this.ready ??= mkdir(this.partialDir, { recursive: true }).then(() => undefined);
    return this.ready;
  }

  async put(key: string, body: Readable, signal?: AbortSignal): Promise<void> {
    checkKey(key);
    await this.prepare();
    const partial = join(this.partialDir, key);
    try {
      await pipeline(body, createWriteStream(partial, { flags: "wx" }), ...(signal ? [{ signal }] : []));
      // Durable before it becomes visible: the bytes, then the rename.
      const handle = await open(partial, "r");
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(partial, join(this.dir, key));
    } catch (err) {
      body.destroy();
      await rm(partial, { force: true });
      throw err;
    }
  }

  async get(key: string): Promise<{ body: Readable; size: number }> {
    checkKey(key);
    const path = join(this.dir, key);
    // Open first, then stat the open file: a delete after this point cannot cut the stream short.
    const handle = await open(path, "r").catch((err: NodeJS.ErrnoException) => {
      throw err.code === "ENOENT" ? new BlobNotFound(key) : err;
    });
    try {
      const { size } = await handle.stat();
      return { body: createReadStream("", { fd: handle, highWaterMark: 64 * 1024 }), size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await rm(join(this.dir, key), { force: true });
    await rm(join(this.partialDir, key), { force: true });
  }

  async exists(key: string): Promise<boolean> {
    checkKey(key);
    return stat(join(this.dir, key)).then(
      (s) => s.isFile(),
      () => false,
    );
  }
}
