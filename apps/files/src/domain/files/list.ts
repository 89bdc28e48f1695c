import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { Id, pageInput, pageOf, pageStart, type Page } from "@gateway/contract";
import type { FilesContext } from "../context.js";
import type { File } from "../../generated/prisma/client.js";

export const ListFilesInput = z.object({
  tenant_id: Id,
  ...pageInput(200, 100),
});
export type ListFilesInput = z.input<typeof ListFilesInput>;

/**
 * The tenant's files (uploads in progress excluded), newest first, a page at a time
 * (docs/decisions/0212; a file takes its list position when its upload completes);
 * limit 0 means 100.
 */
export async function listFiles({ ctx, input }: { ctx: Pick<FilesContext, "prisma">; input: ListFilesInput }): Promise<Page<File>> {
  const q = parseInput(ListFilesInput, input);
  const after = pageStart(q.cursor);
  const rows = await ctx.prisma.file.findMany({
    where: { tenantId: q.tenant_id, state: { not: "uploading" }, ...(after !== null ? { seq: { lt: after } } : {}) },
    orderBy: { seq: "desc" },
    take: q.limit + 1,
  });
  return pageOf(rows, q.limit, (f) => f.seq);
}
