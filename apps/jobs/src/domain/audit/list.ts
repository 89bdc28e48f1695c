import { z } from "zod";
import { parseInput } from "@gateway/errors";
import { Id, listLimit } from "@gateway/contract";
import type { AuditEvent } from "../../generated/prisma/client.js";
import type { JobsContext } from "../context.js";

export const ListAuditEventsInput = z.object({
  type: z.string().max(128).default(""),
  request_id: z.string().max(128).default(""),
  limit: listLimit(500, 100),
  tenant_id: Id,
});
export type ListAuditEventsInput = z.input<typeof ListAuditEventsInput>;

/**
 * One tenant's events (those whose data names it as `tenant_id`), newest first;
 * `type` and `request_id` filter when not empty; limit 0 means 100.
 */
export async function listAuditEvents({ ctx, input }: { ctx: JobsContext; input: ListAuditEventsInput }): Promise<AuditEvent[]> {
  const q = parseInput(ListAuditEventsInput, input);
  return ctx.prisma.auditEvent.findMany({
    where: {
      data: { path: ["tenant_id"], equals: q.tenant_id },
      ...(q.type ? { type: q.type } : {}),
      ...(q.request_id ? { requestId: q.request_id } : {}),
    },
    orderBy: [{ occurredAt: "desc" }, { eventId: "desc" }],
    take: q.limit,
  });
}
