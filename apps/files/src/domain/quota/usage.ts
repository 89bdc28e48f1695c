import { AppError } from "@gateway/errors";
import type { FilesLimits, Tx } from "../context.js";
import type { PrismaClient } from "../../generated/prisma/client.js";

/** A tenant's storage as the contract shows it: limits in force and what its ready files hold. */
export type StorageQuota = { bytes_limit: number; bytes_used: number; files_limit: number; files_used: number };

type Row = { bytes_used: bigint; files_used: number; bytes_quota: bigint | null; files_quota: number | null };
type Db = Pick<PrismaClient, "$queryRawUnsafe"> | Tx;
type Defaults = Pick<FilesLimits, "tenantBytesQuota" | "tenantFilesQuota">;

function view(row: Row | undefined, limits: Defaults): StorageQuota {
  return {
    bytes_limit: row?.bytes_quota != null ? Number(row.bytes_quota) : limits.tenantBytesQuota,
    bytes_used: Number(row?.bytes_used ?? 0n),
    files_limit: row?.files_quota ?? limits.tenantFilesQuota,
    files_used: row?.files_used ?? 0,
  };
}

/** The tenant's quota and usage now (a tenant that never stored anything uses nothing, under the defaults). */
export async function readQuota(db: Db, tenantId: string, limits: Defaults): Promise<StorageQuota> {
  const rows = await db.$queryRawUnsafe<Row[]>("SELECT bytes_used, files_used, bytes_quota, files_quota FROM tenant_storage WHERE tenant_id = $1", tenantId);
  return view(rows[0], limits);
}

/** 409: the tenant keeps as many files as it may. */
export function filesQuotaReached(quota: StorageQuota): AppError {
  return new AppError("conflict", `The tenant's file quota is reached (${quota.files_limit} files); remove files or ask an operator for more.`, {
    extra: { quota },
  });
}

/** 413: this upload does not fit in what is left of the tenant's byte quota. */
export function bytesQuotaExceeded(quota: StorageQuota): AppError {
  const left = Math.max(0, quota.bytes_limit - quota.bytes_used);
  return new AppError("payload_too_large", `The file does not fit in the tenant's storage quota (${left} of ${quota.bytes_limit} bytes left).`, {
    extra: { quota },
  });
}

/**
 * Counts a file that becomes ready, in the transaction that makes it ready:
 * one conditional UPDATE of the tenant's row, which PostgreSQL re-checks after
 * any concurrent commit to the same row, so uploads racing for the last bytes
 * or the last file slot can never together pass the quota. Throws 409 (file
 * count) or 413 (bytes) with the quota when the file does not fit.
 */
export async function chargeFile(tx: Tx, tenantId: string, size: bigint, limits: Defaults): Promise<void> {
  await tx.$executeRawUnsafe("INSERT INTO tenant_storage (tenant_id) VALUES ($1) ON CONFLICT (tenant_id) DO NOTHING", tenantId);
  const charged = await tx.$executeRawUnsafe(
    `UPDATE tenant_storage SET bytes_used = bytes_used + $2, files_used = files_used + 1, updated_at = now()
      WHERE tenant_id = $1
        AND files_used < COALESCE(files_quota, $4)
        AND bytes_used + $2 <= COALESCE(bytes_quota, $3)`,
    tenantId,
    size,
    BigInt(limits.tenantBytesQuota),
    limits.tenantFilesQuota,
  );
  if (charged === 1) return;
  const quota = await readQuota(tx, tenantId, limits);
  throw quota.files_used >= quota.files_limit ? filesQuotaReached(quota) : bytesQuotaExceeded(quota);
}

/** Gives back what removed files held, one UPDATE per tenant in tenant order (sweepers running at once lock rows in the same order). */
export async function releaseFiles(tx: Tx, removed: { tenant_id: string; size: bigint }[]): Promise<void> {
  const byTenant = new Map<string, { bytes: bigint; files: number }>();
  for (const f of removed) {
    const t = byTenant.get(f.tenant_id) ?? { bytes: 0n, files: 0 };
    t.bytes += BigInt(f.size);
    t.files += 1;
    byTenant.set(f.tenant_id, t);
  }
  for (const tenantId of [...byTenant.keys()].sort()) {
    const t = byTenant.get(tenantId)!;
    await tx.$executeRawUnsafe(
      "UPDATE tenant_storage SET bytes_used = bytes_used - $2, files_used = files_used - $3, updated_at = now() WHERE tenant_id = $1",
      tenantId,
      t.bytes,
      t.files,
    );
  }
}
