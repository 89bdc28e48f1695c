import type { FilesContext } from "../context.js";
import type { File } from "../../generated/prisma/client.js";
import { AVAILABLE, checkToken, gone } from "./by-token.js";

export type GetShareInput = { token: string };

/** A downloadable file's metadata by token; nothing is counted. */
export async function getShare({ ctx, input }: { ctx: FilesContext; input: GetShareInput }): Promise<File> {
  const token = checkToken(input.token);
  const rows = await ctx.prisma.$queryRawUnsafe<{ id: string }[]>(`SELECT id FROM files WHERE token = $1 AND ${AVAILABLE}`, token);
  const file = rows[0] ? await ctx.prisma.file.findUnique({ where: { id: rows[0].id } }) : null;
  if (!file) throw gone();
  return file;
}
