import type { managedAi } from "@gateway/protos";
import { created, forward, noContent, ok } from "../forward.js";
import { admin, member } from "./console-access.js";
import { ConnectedAccountListResponse, ConnectedAccountParams, ConnectedAccountResponse, CreateConnectedAccountRequest } from "./connected-accounts.types.js";

const accountJson = (a: managedAi.ConnectedAccount__Output) => ({ id: a.id, provider: a.provider, name: a.name, created_at: a.created_at });

export const postConnectedAccount = forward(admin("services"), "post /console/connected-accounts", {
  summary: "Store a provider credential for the tenant (service:manage); encrypted at rest, never returned.",
  body: CreateConnectedAccountRequest,
  responses: { 201: ["stored (without the secret)", ConnectedAccountResponse] },
  call: ({ deps, body, tenantId }) => deps.services.managedAi.CreateConnectedAccount({ tenant_id: tenantId, ...body }),
  answer: (account) => created(accountJson(account)),
});

export const getConnectedAccounts = forward(member("services"), "get /console/connected-accounts", {
  summary: "The tenant's connected accounts, newest first, without secrets.",
  responses: { 200: ["accounts", ConnectedAccountListResponse] },
  call: ({ deps, tenantId }) => deps.services.managedAi.ListConnectedAccounts({ tenant_id: tenantId }),
  answer: ({ accounts }) => ok(accounts.map(accountJson)),
});

export const deleteConnectedAccount = forward(admin("services"), "delete /console/connected-accounts/:id", {
  summary: "Delete a connected account (service:manage); 409 while an ai-model instance uses it.",
  params: ConnectedAccountParams,
  responses: { 204: "deleted", 404: "no such account of the tenant", 409: "an instance uses it" },
  call: ({ deps, params, tenantId }) => deps.services.managedAi.DeleteConnectedAccount({ tenant_id: tenantId, id: params.id }),
  answer: noContent,
});
