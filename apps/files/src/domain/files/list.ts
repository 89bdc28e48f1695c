import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { Id, listLimit } from "@gateway/contract-schemas";
import type { FilesContext } from "../context.js";
import type { File } from "../../generated/prisma/client.js";

export const ListFilesInput = z.object({
  tenant_id: Id,
  limit: listLimit(200, 100),
});
export type ListFilesInput = z.input<typeof ListFilesInput>;

/** The tenant's files (uploads in progress excluded), newest first; limit 0 means 100. */
export async function listFiles({ ctx, input }: { ctx: Pick<FilesContext, "prisma">; input: ListFilesInput }): Promise<File[]> {
  const q = parseInput(ListFilesInput, input);
  return ctx.prisma.file.findMany({
    where: { tenantId: q.tenant_id, state: { not: "uploading" } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: q.limit,
  });
}
