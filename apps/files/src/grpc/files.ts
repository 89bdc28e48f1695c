import type { Implementation } from "@gateway/grpc-kit";
import type { filesV1 } from "@gateway/protos";
import type { FilesContext } from "../db.js";
import { listFiles } from "../domain/files/list.js";

export function filesHandlers(ctx: FilesContext): Implementation<typeof filesV1> {
  return {
    async ListFiles(req) {
      const files = await listFiles({ ctx, input: req });
      return {
        files: files.map((f) => ({
          id: f.id,
          tenant_id: f.tenantId,
          filename: f.filename,
          size: f.size.toString(),
          sha256: f.sha256,
          created_at: f.createdAt.toISOString(),
          expires_at: f.expiresAt?.toISOString() ?? "",
          max_downloads: f.maxDownloads ?? 0,
          downloads: f.downloads,
        })),
      };
    },
  };
}
