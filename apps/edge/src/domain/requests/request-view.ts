import { AppError, isAppError } from "@gateway/errors";
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
 * Events reach the audit trail within milliseconds of the request.
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
  const [res, usage] = await Promise.all([
    ctx.services.jobs.ListAuditEvents({ tenant_id: input.tenantId, request_id: input.requestId, limit: 200 }),
    ctx.services.managedAi.GetUsage({ id: input.requestId, tenant_id: input.tenantId }).catch((err: unknown) => {
      if (isAppError(err) && (err.code === "not_found" || err.code === "invalid_request")) return null;
      throw err;
    }),
  ]);
  const audit: AuditEntry[] = res.events
    .map((e) => ({
      event_id: e.event_id,
      type: e.type,
      source: e.source,
      occurred_at: e.occurred_at,
      data: JSON.parse(e.data_json) as Record<string, unknown>,
    }))
    .sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
  const owned = audit.filter((e) => e.data.tenant_id === input.tenantId);
  const foreign = audit.some((e) => typeof e.data.tenant_id === "string" && e.data.tenant_id !== input.tenantId);
  if (foreign || (owned.length === 0 && !usage)) throw new AppError("not_found", "No such request.");
  const keyId = usage?.api_key_id || owned.map((e) => e.data.key_id).find((id): id is string => typeof id === "string");
  const key = keyId ? await ctx.db.prisma.apiKey.findUnique({ where: { id: keyId }, select: { id: true, name: true, prefix: true, tenantId: true } }) : null;
  return {
    request_id: input.requestId,
    key: key && key.tenantId === input.tenantId ? { id: key.id, name: key.name, prefix: key.prefix } : null,
    usage: usage ? usageJson(usage) : null,
    audit: owned,
  };
}
