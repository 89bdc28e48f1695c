import type { PlatformRole, TenantRole } from "../principal.js";
import type { IdentityContext } from "./context.js";

export type UserListItem = {
  id: string;
  email: string;
  name: string | null;
  tenant_id: string;
  tenant_name: string;
  tenant_role: TenantRole;
  platform_role: PlatformRole | null;
  created_at: string;
};

/** Users newest first (at most `limit`), optionally those whose email contains `email`; never password hashes. */
export async function listUsers({ ctx, input }: { ctx: Pick<IdentityContext, "prisma">; input: { email?: string; limit: number } }): Promise<UserListItem[]> {
  const users = await ctx.prisma.user.findMany({
    where: input.email ? { email: { contains: input.email.toLowerCase() } } : {},
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: input.limit,
    select: { id: true, email: true, name: true, tenantId: true, tenantRole: true, platformRole: true, createdAt: true, tenant: { select: { name: true } } },
  });
  return users.map((u) => ({
    id: u.id,
    email: u.email,
    name: u.name,
    tenant_id: u.tenantId,
    tenant_name: u.tenant.name,
    tenant_role: u.tenantRole as TenantRole,
    platform_role: (u.platformRole as PlatformRole | null) ?? null,
    created_at: u.createdAt.toISOString(),
  }));
}
