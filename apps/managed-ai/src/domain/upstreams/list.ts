import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ListLimit } from "../schemas.js";
import { UPSTREAM_COLUMNS, upstreamView, type UpstreamView } from "./view.js";

export const ListUpstreamsInput = z.object({ limit: ListLimit(200) });
export type ListUpstreamsInput = z.input<typeof ListUpstreamsInput>;

/** Newest first, at most 200 (spec section 8), without credentials. */
export async function listUpstreams({ ctx, input }: { ctx: ManagedAiContext; input: ListUpstreamsInput }): Promise<UpstreamView[]> {
  const { limit } = parseInput(ListUpstreamsInput, input);
  const rows = await ctx.prisma.upstream.findMany({ select: UPSTREAM_COLUMNS, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: limit });
  return rows.map(upstreamView);
}
