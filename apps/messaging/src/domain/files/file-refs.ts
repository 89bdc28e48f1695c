import { AppError } from "@gateway/errors";
import { FILE_ID_PATTERN } from "@gateway/contract";

/**
 * File messages reference a file of the files service by id. The reference is
 * checked for its form here; whether the file exists (and belongs to the tenant)
 * is asked through this small interface, so the files service can answer it
 * once it offers a lookup (docs/decisions/0123).
 */
export type FileRefs = {
  /** Resolves when `fileId` names a usable file of the tenant; throws AppError not_found otherwise. */
  check(input: { tenantId: string; fileId: string }): Promise<void>;
};

/** The files service's ids: `file_` and a ULID (or any id of the contract's pattern with that prefix). */
export function assertFileIdFormat(fileId: string): void {
  if (!FILE_ID_PATTERN.test(fileId)) throw new AppError("invalid_request", "file_id must be a file id of the files service (file_…).");
}

/** Accepts every well-formed reference: used until the files service answers lookups. */
export const formatOnlyFileRefs: FileRefs = {
  async check({ fileId }) {
    assertFileIdFormat(fileId);
  },
};
