import type { managedAi } from "@gateway/protos";
import type { EdgeDeps } from "../../deps.js";
import { sessionPrincipal } from "../../http/access.js";
import { defineRoute } from "../../http/route.js";
import { ConnectedAccountListResponse, ConnectedAccountParams, ConnectedAccountResponse, CreateConnectedAccountRequest } from "./connected-accounts.types.js";

const accountJson = (a: managedAi.ConnectedAccount__Output) => ({ id: a.id, provider: a.provider, name: a.name, created_at: a.created_at });

export const postConnectedAccount = defineRoute<EdgeDeps, Record<string, never>, Record<string, never>, CreateConnectedAccountRequest>({
  method: "post",
  path: "/console/connected-accounts",
  summary: "Store a provider credential for the tenant (service:manage); encrypted at rest, never returned.",
  tags: ["console", "services"],
  access: { kind: "tenant", minRole: "admin" },
  body: CreateConnectedAccountRequest,
  responses: { 201: { description: "stored (without the secret)", schema: ConnectedAccountResponse } },
  async handler({ deps, body, principal }) {
    const account = await deps.services.managedAi.CreateConnectedAccount({ tenant_id: sessionPrincipal(principal).tenantId, ...body });
    return { status: 201, body: { data: accountJson(account) } };
  },
});

export const getConnectedAccounts = defineRoute<EdgeDeps>({
  method: "get",
  path: "/console/connected-accounts",
  summary: "The tenant's connected accounts, newest first, without secrets.",
  tags: ["console", "services"],
  access: { kind: "tenant", minRole: "member" },
  responses: { 200: { description: "accounts", schema: ConnectedAccountListResponse } },
  async handler({ deps, principal }) {
    const res = await deps.services.managedAi.ListConnectedAccounts({ tenant_id: sessionPrincipal(principal).tenantId });
    return { status: 200, body: { data: res.accounts.map(accountJson) } };
  },
});

export const deleteConnectedAccount = defineRoute<EdgeDeps, ConnectedAccountParams>({
  method: "delete",
  path: "/console/connected-accounts/:id",
  summary: "Delete a connected account (service:manage); 409 while an ai-model instance uses it.",
  tags: ["console", "services"],
  access: { kind: "tenant", minRole: "admin" },
  params: ConnectedAccountParams,
  responses: { 204: { description: "deleted" }, 404: { description: "no such account of the tenant" }, 409: { description: "an instance uses it" } },
  async handler({ deps, params, principal }) {
    await deps.services.managedAi.DeleteConnectedAccount({ tenant_id: sessionPrincipal(principal).tenantId, id: params.id });
    return { status: 204 };
  },
});
