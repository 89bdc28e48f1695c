import { AppError } from "@gateway/errors";
import { isUniqueViolation } from "@gateway/db-kit";
import { newId } from "@gateway/contract/ids";
import type { Tx } from "../../db.js";
import type { PlatformRole } from "../principal.js";
import type { IdentityContext } from "./context.js";
import { hashPassword } from "./passwords.js";

export type RegisterUserInput = {
  email: string;
  password: string;
  name?: string | undefined;
  tenantName?: string | undefined;
  platformRole?: PlatformRole | null;
};

/** Creates a tenant and its owner in one transaction. Duplicate email → conflict. */
export async function registerUser({ ctx, input }: { ctx: Pick<IdentityContext, "transact">; input: RegisterUserInput }) {
  const passwordHash = await hashPassword(input.password);
  const email = input.email.trim().toLowerCase();
  const userId = newId("usr");
  const tenantId = newId("ten");
  try {
    await ctx.transact(async (tx: Tx, emit) => {
      await tx.tenant.create({ data: { id: tenantId, name: input.tenantName ?? `${input.name ?? email}'s tenant` } });
      await tx.user.create({
        data: {
          id: userId,
          email,
          name: input.name ?? null,
          passwordHash,
          tenantId,
          tenantRole: "owner",
          platformRole: input.platformRole ?? null,
        },
      });
      await emit("identity.user_registered", { user_id: userId, tenant_id: tenantId });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError("conflict", "An account with this email already exists.");
    throw err;
  }
  return { userId, tenantId };
}
