import type { FilesEnv } from "../env.js";
import { LocalStore } from "./local.js";
import { S3Store } from "./s3.js";
import type { BlobStore } from "./store.js";

/** The store the configuration names. */
export function createStore(env: FilesEnv): BlobStore {
  if (env.FILES_STORAGE === "local") return new LocalStore(env.FILES_LOCAL_DIR);
  return new S3Store({
    bucket: env.FILES_S3_BUCKET,
    prefix: env.FILES_S3_PREFIX,
    region: env.FILES_S3_REGION,
    forcePathStyle: env.FILES_S3_FORCE_PATH_STYLE,
    partBytes: env.FILES_S3_PART_BYTES,
    ...(env.FILES_S3_ENDPOINT ? { endpoint: env.FILES_S3_ENDPOINT } : {}),
    ...(env.FILES_S3_ACCESS_KEY_ID && env.FILES_S3_SECRET_ACCESS_KEY
      ? { credentials: { accessKeyId: env.FILES_S3_ACCESS_KEY_ID, secretAccessKey: env.FILES_S3_SECRET_ACCESS_KEY } }
      : {}),
  });
}
