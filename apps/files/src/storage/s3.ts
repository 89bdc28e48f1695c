import { Readable } from "node:stream";
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { BlobNotFound, checkKey, type BlobStore } from "./store.js";

export type S3StoreOptions = {
  bucket: string;
  /** Prepended to every key (e.g. `files/`). */
  prefix?: string;
  region: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Part size of multipart uploads; at least 5 MiB (S3's minimum). */
  partBytes?: number;
};

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === "NoSuchKey" || e?.name === "NotFound" || e?.$metadata?.httpStatusCode === 404;
}

/**
 * An S3-compatible object store, for deployments with several machines.
 * Uploads are streamed as a multipart upload one part at a time (memory per
 * upload is about one part); an upload whose body fails is aborted, so no
 * object appears. Parts of uploads cut short by a crash are left to the
 * bucket's lifecycle rule (AbortIncompleteMultipartUpload).
 */
export class S3Store implements BlobStore {
  readonly kind = "s3";
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly partBytes: number;

  constructor(options: S3StoreOptions) {
    const config: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle ?? true,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    };
    this.client = new S3Client(config);
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? "";
    this.partBytes = Math.max(options.partBytes ?? 8 * 1_048_576, 5 * 1_048_576);
  }

  private objectKey(key: string): string {
    return `${this.prefix}${checkKey(key)}`;
  }

  async put(key: string, body: Readable, signal?: AbortSignal): Promise<void> {
    const objectKey = this.objectKey(key);
    // An abort fails the body, which makes the upload abort its multipart upload
    // (or never send its single PUT) before done() settles: nothing is left behind.
    const onAbort = () => body.destroy(new Error("upload aborted"));
    if (signal?.aborted) onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    body.on("error", () => undefined);
    try {
      const upload = new Upload({
        client: this.client,
        params: { Bucket: this.bucket, Key: objectKey, Body: body },
        queueSize: 1,
        partSize: this.partBytes,
        leavePartsOnError: false,
      });
      await upload.done();
      if (body.errored) {
        await this.delete(key);
        throw body.errored;
      }
    } catch (err) {
      body.destroy();
      throw err;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  async get(key: string): Promise<{ body: Readable; size: number }> {
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      const body = res.Body;
      if (!(body instanceof Readable)) throw new Error("the S3 client returned a body that is not a Node.js stream");
      return { body, size: Number(res.ContentLength ?? 0) };
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFound(key);
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}
