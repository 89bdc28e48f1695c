import { AppError } from "@gateway/errors";
import type { EdgeDeps } from "../../deps.js";

/** The id of a tenant that exists (tenants live in the edge's database), else 404 with `message`. */
export async function existingTenant(deps: EdgeDeps, id: string, message = "No such tenant."): Promise<string> {
  const tenant = await deps.db.prisma.tenant.findUnique({ where: { id }, select: { id: true } });
  if (!tenant) throw new AppError("not_found", message);
  return tenant.id;
}
