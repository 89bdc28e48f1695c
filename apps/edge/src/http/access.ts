import { AppError } from "@gateway/errors";
import type { Request } from "express";
import type { KeyRequirement } from "../domain/keys/authenticate-key.js";
import type { Scope, ServiceType } from "../domain/keys/scopes.js";
import type {
  ApiKeyPrincipal,
  Principal,
  SessionAuthenticator,
  SessionPrincipal,
  TenantRole,
  WidgetAuthenticator,
  WidgetPrincipal,
} from "../domain/principal.js";
import { type Credentials, credentialsOf } from "./credentials.js";

/**
 * What a route requires of its caller, declared once on the route. The one
 * middleware below decides every route from it; no handler checks roles.
 */
export type Access =
  | { kind: "public" }
  /** Any signed-in user. */
  | { kind: "session" }
  /**
   * A member of a tenant; `admin` means owner or admin ("tenant administrator",
   * "service:manage"). `hideAs404`: callers without the role get 404, not 403
   * (for views whose existence is itself private).
   */
  | { kind: "tenant"; minRole: "member" | "admin"; hideAs404?: boolean }
  /** An operator: `read` for platform_admin, admin, finance; `write` for platform_admin only. */
  | { kind: "platform"; level: "read" | "write" }
  /**
   * An API key with the full key policy. `scope` absent: any valid key.
   * `service`: the instance named by a path parameter, checked against the
   * key's `service_aliases` as `<type>:<alias>`.
   */
  | { kind: "apiKey"; scope?: Scope; service?: { type: ServiceType; aliasParam: string } }
  /**
   * A chat widget's token (Authorization: Bearer). With `orApiKeyScope`, an API
   * key with that scope is accepted instead (the tenant-wide view of the route).
   */
  | { kind: "widget"; orApiKeyScope?: Scope };

export type Authenticators = {
  sessions: SessionAuthenticator;
  widgets?: WidgetAuthenticator;
  /** Applies the whole key policy to the key presented (`Credentials.key`); throws the contract's 401/403/429. */
  keys: (req: Request, presented: string | undefined, requirement: KeyRequirement) => Promise<ApiKeyPrincipal>;
};

export const ADMIN_TENANT_ROLES: readonly TenantRole[] = ["owner", "admin"];

async function sessionOf(credentials: Credentials, sessions: SessionAuthenticator): Promise<SessionPrincipal> {
  const token = credentials.bearer;
  if (!token) throw new AppError("unauthorized", "Sign in: send Authorization: Bearer <token>.");
  const principal = await sessions.authenticate(token);
  if (!principal) throw new AppError("unauthorized", "The session token is invalid, expired or signed out.");
  return principal;
}

/** Authenticates and authorizes one request against a route's declared access. */
export async function authorize(access: Access, req: Request, auth: Authenticators): Promise<Principal> {
  if (access.kind === "public") return { kind: "anonymous" };
  const credentials = credentialsOf(req);
  switch (access.kind) {
    case "session":
      return sessionOf(credentials, auth.sessions);
    case "tenant": {
      const principal = await sessionOf(credentials, auth.sessions);
      if (access.minRole === "admin" && !ADMIN_TENANT_ROLES.includes(principal.tenantRole)) {
        if (access.hideAs404) throw new AppError("not_found", "Not found.");
        throw new AppError("forbidden", "This needs a tenant owner or admin.");
      }
      return principal;
    }
    case "apiKey": {
      const alias = access.service ? req.params[access.service.aliasParam] : undefined;
      return auth.keys(req, credentials.key, {
        ...(access.scope ? { scope: access.scope } : {}),
        ...(access.service && typeof alias === "string" ? { service: { type: access.service.type, alias } } : {}),
      });
    }
    case "widget": {
      const token = credentials.bearer;
      // An API key takes the key path when the route allows one.
      if (access.orApiKeyScope && credentials.presentsKey) return auth.keys(req, credentials.key, { scope: access.orApiKeyScope });
      if (!token) throw new AppError("unauthorized", "Send the widget token: Authorization: Bearer <token>.");
      const principal = auth.widgets ? await auth.widgets.authenticate(token) : null;
      if (!principal) throw new AppError("unauthorized", "The widget token is invalid, expired or revoked.");
      return principal;
    }
    case "platform": {
      const principal = await sessionOf(credentials, auth.sessions);
      const role = principal.platformRole;
      const allowed = access.level === "write" ? role === "platform_admin" : role !== null;
      if (!allowed) {
        throw new AppError("forbidden", access.level === "write" ? "This needs the platform_admin role." : "This needs a platform role.");
      }
      return principal;
    }
  }
}

/** The session principal of a route whose access requires a session (narrowing, not a check). */
export function sessionPrincipal(principal: Principal): SessionPrincipal {
  if (principal.kind !== "session") throw new AppError("unauthorized", "Sign in first.");
  return principal;
}

/** The widget principal of a route whose access requires a widget token (narrowing, not a check). */
export function widgetPrincipal(principal: Principal): WidgetPrincipal {
  if (principal.kind !== "widget") throw new AppError("unauthorized", "Send the widget token.");
  return principal;
}

/** The key principal of a route whose access requires an API key (narrowing, not a check). */
export function keyPrincipal(principal: Principal): ApiKeyPrincipal {
  if (principal.kind !== "apiKey") throw new AppError("unauthorized", "Send an API key.");
  return principal;
}
