export const TENANT_ROLES = ["owner", "admin", "member"] as const;
export type TenantRole = (typeof TENANT_ROLES)[number];

export const PLATFORM_ROLES = ["platform_admin", "admin", "finance"] as const;
export type PlatformRole = (typeof PLATFORM_ROLES)[number];

export type SessionPrincipal = {
  kind: "session";
  userId: string;
  sessionId: string;
  tenantId: string;
  tenantRole: TenantRole;
  platformRole: PlatformRole | null;
};

export type ApiKeyPrincipal = {
  kind: "apiKey";
  keyId: string;
  tenantId: string;
  keyName: string;
  keyPrefix: string;
  scopes: ReadonlySet<string>;
};

export type Principal = { kind: "anonymous" } | SessionPrincipal | ApiKeyPrincipal;
