import { ID_PATTERN_BODY } from "@gateway/contract";

/** API key scopes (spec section 5, plus file:write from CONTRACT.md section 12). */
export const SCOPES = [
  "bot:send",
  "bot:session:create",
  "bot:events:read",
  "file:read",
  "file:write",
  "push:send",
  "tron:lease",
  "jobs:read",
  "ai:invoke",
  "socialops:write",
  "socialops:read",
  "conversation:read",
  "conversation:write",
  "conversation:events:write",
  "*",
] as const;
export type Scope = Exclude<(typeof SCOPES)[number], "*">;

/** Kinds of service instance a key's `service_aliases` can name (`<service_id>:<alias>`). */
export const SERVICE_TYPES = ["ai-model", "webhook-push", "socialops"] as const;
export type ServiceType = (typeof SERVICE_TYPES)[number];

export const SERVICE_ALIAS_PATTERN = new RegExp(`^(${SERVICE_TYPES.join("|")}):${ID_PATTERN_BODY}$`);
