import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import { authorize, type Access, type Authenticators } from "./access.js";
import type { PlatformRole, SessionPrincipal, TenantRole } from "../domain/principal.js";

function principal(tenantRole: TenantRole, platformRole: PlatformRole | null): SessionPrincipal {
  return { kind: "session", userId: "usr_1", sessionId: "ses_1", tenantId: "ten_1", tenantRole, platformRole };
}

function auth(p: SessionPrincipal | null): Authenticators {
  return {
    sessions: { authenticate: async () => p },
    keys: async () => {
      throw new AppError("unauthorized", "no key");
    },
  };
}

const req = (token?: string) => ({ headers: token ? { authorization: `Bearer ${token}` } : {}, params: {} }) as unknown as Request;

async function outcome(access: Access, p: SessionPrincipal | null, token = "t"): Promise<string> {
  try {
    const got = await authorize(access, req(token), auth(p));
    return got.kind;
  } catch (err) {
    return (err as AppError).code;
  }
}

describe("authorize", () => {
  it("decides every declared access from the session's roles", async () => {
    const table: [Access, TenantRole, PlatformRole | null, string][] = [
      [{ kind: "public" }, "member", null, "anonymous"],
      [{ kind: "session" }, "member", null, "session"],
      [{ kind: "tenant", minRole: "member" }, "member", null, "session"],
      [{ kind: "tenant", minRole: "admin" }, "member", null, "forbidden"],
      [{ kind: "tenant", minRole: "admin", hideAs404: true }, "member", null, "not_found"],
      [{ kind: "tenant", minRole: "admin" }, "admin", null, "session"],
      [{ kind: "tenant", minRole: "admin" }, "owner", null, "session"],
      [{ kind: "platform", level: "read" }, "owner", null, "forbidden"],
      [{ kind: "platform", level: "read" }, "member", "finance", "session"],
      [{ kind: "platform", level: "read" }, "member", "admin", "session"],
      [{ kind: "platform", level: "write" }, "member", "finance", "forbidden"],
      [{ kind: "platform", level: "write" }, "member", "admin", "forbidden"],
      [{ kind: "platform", level: "write" }, "member", "platform_admin", "session"],
    ];
    for (const [access, tenantRole, platformRole, expected] of table) {
      expect(await outcome(access, principal(tenantRole, platformRole)), JSON.stringify([access, tenantRole, platformRole])).toBe(expected);
    }
  });

  it("answers 401 before any role check when the session is missing or invalid", async () => {
    expect(await outcome({ kind: "platform", level: "write" }, null)).toBe("unauthorized");
    expect(await outcome({ kind: "tenant", minRole: "admin" }, principal("owner", null), "")).toBe("unauthorized");
  });
});
