import { z } from "zod";
import { parseInput } from "@gateway/errors";
import type { ManagedAiContext } from "../context.js";
import { ListLimit } from "../schemas.js";
import { upstreamView, type UpstreamView } from "./view.js";

export const ListUpstreamsInput = z.object({ limit: ListLimit(200) });
export type ListUpstreamsInput = z.input<typeof ListUpstreamsInput>;

/** Newest first, at most 200 (spec section 8), without credentials. */
export async function listUpstreams({ ctx, input }: { ctx: ManagedAiContext; input: ListUpstreamsInput }): Promise<UpstreamView[]> {
  const { limit } = parseInput(ListUpstreamsInput, input);
  return (await ctx.store.upstreams.list(limit)).map(upstreamView);
}
