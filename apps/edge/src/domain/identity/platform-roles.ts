import { AppError } from "@gateway/errors";
import type { Logger } from "@gateway/logger";
import type { PlatformRole } from "../principal.js";
import type { IdentityContext } from "./context.js";
import { registerUser } from "./register-user.js";

/**
 * Grants or removes a user's platform role. The last platform_admin cannot
 * lose the role (nobody could grant it again); concurrent demotions are
 * serialized by locking the platform admins' rows.
 */
export async function setPlatformRole({
  ctx,
  input,
}: {
  ctx: IdentityContext;
  input: { userId: string; role: PlatformRole | null; changedBy: string };
}): Promise<{ user_id: string; platform_role: PlatformRole | null }> {
  await ctx.transact(async (tx, emit) => {
    const admins = await tx.$queryRawUnsafe<{ id: string }[]>("SELECT id FROM users WHERE platform_role = 'platform_admin' FOR UPDATE");
    const user = await tx.user.findUnique({ where: { id: input.userId } });
    if (!user) throw new AppError("not_found", "No such user.");
    if (user.platformRole === input.role) return;
    if (user.platformRole === "platform_admin" && admins.length <= 1) {
      throw new AppError("conflict", "This is the last platform_admin; grant the role to someone else first.");
    }
    await tx.user.update({ where: { id: user.id }, data: { platformRole: input.role } });
    await emit("identity.platform_role_changed", { user_id: user.id, changed_by: input.changedBy, from: user.platformRole, to: input.role });
  });
  await ctx.sessions.invalidate({ user_id: input.userId });
  return { user_id: input.userId, platform_role: input.role };
}

/**
 * The first operator, from BOOTSTRAP_ADMIN_EMAIL/PASSWORD. It only creates:
 * an existing platform_admin with that email is left as it is (idempotent),
 * and an existing account without that role is left alone too, with an error
 * logged. Promoting it would hand the platform to whoever registered the
 * address before an operator named it in the configuration, with their own
 * password (decision 0181).
 */
export async function bootstrapPlatformAdmin({
  ctx,
  input,
  logger,
}: {
  ctx: IdentityContext;
  input: { email: string; password: string };
  logger: Logger;
}): Promise<{ outcome: "created" | "exists" | "refused" }> {
  const email = input.email.trim().toLowerCase();
  const existing = await ctx.prisma.user.findUnique({ where: { email } });
  if (!existing) {
    try {
      await registerUser({
        ctx,
        input: { email, password: input.password, name: "Platform admin", tenantName: "Platform operators", platformRole: "platform_admin" },
      });
      logger.info({ email }, "bootstrap platform admin created");
      return { outcome: "created" };
    } catch (err) {
      // Another edge replica created it first, or someone registered the address meanwhile.
      if (!(err instanceof AppError && err.code === "conflict")) throw err;
    }
  }
  const user = existing ?? (await ctx.prisma.user.findUniqueOrThrow({ where: { email } }));
  if (user.platformRole === "platform_admin") return { outcome: "exists" };
  logger.error(
    { email, user_id: user.id, platform_role: user.platformRole },
    "bootstrap refused: an account with BOOTSTRAP_ADMIN_EMAIL exists without the platform_admin role; it is left as it is and no platform admin was created. " +
      "Choose another BOOTSTRAP_ADMIN_EMAIL, or have a platform admin grant the role (PUT /ops/users/{id}/platform-role)",
  );
  return { outcome: "refused" };
}
