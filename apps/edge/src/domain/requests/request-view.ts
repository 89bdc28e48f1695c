import { AppError, isAppError } from "@gateway/errors";
import { captureOperation, postOperation, reserveOperation, voidOperation } from "@gateway/ledger-client";
import type { managedAi } from "@gateway/protos";
import type { Services } from "../../clients.js";
import type { Db } from "../../db.js";

export type AuditEntry = { event_id: string; type: string; source: string; occurred_at: string; data: Record<string, unknown> };

export type RequestView = {
  request_id: string;
  key: { id: string; name: string; prefix: string } | null;
  usage: Record<string, unknown> | null;
  audit: AuditEntry[];
};

/**
 * What the gateway recorded about one request: the key that made it, its usage
 * record, its audit events; never prompts, answers or secrets (events carry
 * none). Visible only to the owning tenant; to anyone else it does not exist.
 * The events come from where they are kept (docs/decisions/0330): the audit trail
 * (every event but those below, within milliseconds of the request), managed-ai
 * (the reservation and settlement kept with the usage record) and the ledger (the
 * movements of its usage record's operations, from its journal). An event found in
 * two places (the audit trail kept copies before) is listed once.
 */
export async function getRequestView({
  ctx,
  input,
  usageJson,
}: {
  ctx: { db: Db; services: Services };
  input: { requestId: string; tenantId: string };
  /** How a usage record is shown (spec 2.1). */
  usageJson: (record: managedAi.UsageRecord__Output) => Record<string, unknown>;
}): Promise<RequestView> {
  const { requestId, tenantId } = input;
  const [audited, kept, usage] = await Promise.all([
    ctx.services.jobs.ListAuditEvents({ tenant_id: tenantId, request_id: requestId, limit: 200 }),
    ctx.services.managedAi.ListRequestEvents({ tenant_id: tenantId, request_id: requestId }),
    ctx.services.managedAi.GetUsage({ id: requestId, tenant_id: tenantId }).catch((err: unknown) => {
      if (isAppError(err) && (err.code === "not_found" || err.code === "invalid_request")) return null;
      throw err;
    }),
  ]);
  // Money moves only under a usage record's operations: without one there is nothing to ask the ledger.
  const operations = usage ? requestOperations(requestId) : [];
  const moved = operations.length > 0 ? await ctx.services.ledger.ListEvents({ tenant_id: tenantId, operation_ids: operations }) : { events: [] };
  const seen = new Set<string>();
  const audit: AuditEntry[] = [];
  for (const e of [...kept.events, ...moved.events, ...audited.events]) {
    if (seen.has(e.event_id)) continue;
    seen.add(e.event_id);
    audit.push({
      event_id: e.event_id,
      type: e.type,
      source: e.source,
      occurred_at: e.occurred_at,
      data: JSON.parse(e.data_json) as Record<string, unknown>,
    });
  }
  audit.sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
  const owned = audit.filter((e) => e.data.tenant_id === tenantId);
  const foreign = audit.some((e) => typeof e.data.tenant_id === "string" && e.data.tenant_id !== tenantId);
  if (foreign || (owned.length === 0 && !usage)) throw new AppError("not_found", "No such request.");
  const keyId = usage?.api_key_id || owned.map((e) => e.data.key_id).find((id): id is string => typeof id === "string");
  const key = keyId ? await ctx.db.prisma.apiKey.findUnique({ where: { id: keyId }, select: { id: true, name: true, prefix: true, tenantId: true } }) : null;
  return {
    request_id: requestId,
    key: key && key.tenantId === tenantId ? { id: key.id, name: key.name, prefix: key.prefix } : null,
    usage: usage ? usageJson(usage) : null,
    audit: owned,
  };
}

/**
 * The ledger operations a metered request's money moves under (their ids derive from the
 * request's); one longer than an operation id may be (128 characters) names no movement.
 */
function requestOperations(requestId: string): string[] {
  return [reserveOperation(requestId), captureOperation(requestId), voidOperation(requestId), postOperation(requestId)].filter((op) => op.length <= 128);
}
