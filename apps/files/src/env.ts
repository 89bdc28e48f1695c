import { z } from "zod";
import { bool, env, int, loadEnv as load, oneOf, serviceEnvShape, str } from "@gateway/config";

const DAY = 86_400;

export const FilesEnv = z
  .object({
    ...serviceEnvShape({ service: "files", grpcPort: 50055, metricsPort: 9105 }),
    FILES_MAX_BYTES: int("Largest upload accepted; a larger one (declared or counted) gets 413 and leaves nothing.", 100 * 1_048_576, { min: 1 }),
    FILES_DEFAULT_TTL_SECONDS: int("Lifetime of an upload sent without x-expires-in.", 7 * DAY, { min: 1 }),
    FILES_MAX_TTL_SECONDS: int("Largest x-expires-in accepted (seconds).", 365 * DAY, { min: 1 }),
    FILES_STORAGE: oneOf(
      "Where file bytes live: `local` (a directory) or `s3` (an S3-compatible object store, for several machines).",
      ["local", "s3"],
      "local",
    ),
    FILES_LOCAL_DIR: str("Directory of the local store (FILES_STORAGE=local); created when missing.", "./data/files"),
    FILES_S3_ENDPOINT: z.string().url().optional().describe("Endpoint of the S3-compatible store (unset: AWS S3 of FILES_S3_REGION)."),
    FILES_S3_REGION: str("Region of the S3 store.", "us-east-1"),
    FILES_S3_BUCKET: str("Bucket of the S3 store.", "gateway-files"),
    FILES_S3_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_\-/]{0,128}$/)
      .default("files/")
      .describe("Key prefix of the objects in the bucket."),
    FILES_S3_FORCE_PATH_STYLE: bool("Path-style bucket addressing (most self-hosted S3-compatible stores need it).", true),
    FILES_S3_ACCESS_KEY_ID: env.optionalSecret("Access key id for the S3 store (unset: the SDK's default credential chain)."),
    FILES_S3_SECRET_ACCESS_KEY: env.optionalSecret("Secret access key for the S3 store."),
    FILES_S3_PART_BYTES: int("Part size of the streamed multipart upload to S3 (memory per upload in progress is about one part).", 8 * 1_048_576, {
      min: 5 * 1_048_576,
    }),
    FILES_SWEEP_INTERVAL_MS: int("How often the sweeper removes expired and exhausted files (safe with several replicas).", 60_000, { min: 100 }),
    FILES_EXHAUSTED_GRACE_SECONDS: int(
      "A file whose downloads are used up is removed this long after its last download began (so that download can finish).",
      3_600,
      { min: 0 },
    ),
    TENANT_STORAGE_BYTES_QUOTA: int(
      "Bytes a tenant's files may hold together (ready files; an operator may set another limit per tenant). An upload that does not fit gets 413.",
      10 * 1_073_741_824,
      { min: 0, max: Number.MAX_SAFE_INTEGER },
    ),
    TENANT_FILES_QUOTA: int("Files a tenant may keep at once (an operator may set another limit per tenant). An upload past it gets 409.", 10_000, {
      min: 0,
      max: 2_147_483_647,
    }),
    FILES_STALE_UPLOAD_SECONDS: int("An upload still in progress after this long is taken as abandoned (its process died) and cleaned up.", DAY, {
      min: 60,
    }),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.FILES_DEFAULT_TTL_SECONDS > cfg.FILES_MAX_TTL_SECONDS) {
      ctx.addIssue({ code: "custom", path: ["FILES_DEFAULT_TTL_SECONDS"], message: "must not exceed FILES_MAX_TTL_SECONDS" });
    }
    if (Boolean(cfg.FILES_S3_ACCESS_KEY_ID) !== Boolean(cfg.FILES_S3_SECRET_ACCESS_KEY)) {
      ctx.addIssue({
        code: "custom",
        path: ["FILES_S3_SECRET_ACCESS_KEY"],
        message: "set both FILES_S3_ACCESS_KEY_ID and FILES_S3_SECRET_ACCESS_KEY, or neither",
      });
    }
  });
export type FilesEnv = z.output<typeof FilesEnv>;

export function loadEnv(source: Record<string, string | undefined>): FilesEnv {
  return load(FilesEnv, source);
}
