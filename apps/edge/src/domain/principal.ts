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
  /** The key's spend budget, forwarded with metered calls (docs/decisions/0024); null: none. */
  budget?: KeyBudget | null;
};

/** A key's spend budget: units of USD 0.0001 per UTC day or month. */
export type KeyBudget = { units: bigint; period: "day" | "month" };

/** A chat widget's visitor, from a widget token (its own secret and audience; only widget routes accept it). */
export type WidgetPrincipal = {
  kind: "widget";
  sessionId: string;
  tenantId: string;
  chatId: string;
  visitorId: string;
  conversationId: string | null;
  expiresAt: Date;
};

export type Principal = { kind: "anonymous" } | SessionPrincipal | ApiKeyPrincipal | WidgetPrincipal;

export type SessionAuthenticator = {
  /** The principal of a valid, live session access token, else null. */
  authenticate(token: string): Promise<SessionPrincipal | null>;
};

export type WidgetAuthenticator = {
  /** The principal of a valid widget token of a live session, else null. */
  authenticate(token: string): Promise<WidgetPrincipal | null>;
};
