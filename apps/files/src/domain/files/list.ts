import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { Id, newestFirst, pageInput, type Page } from "@gateway/contract";
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
  return newestFirst((args) => ctx.prisma.file.findMany(args), { tenantId: q.tenant_id, state: { not: "uploading" } }, q);
}
