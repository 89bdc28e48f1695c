import { z } from "zod";
import { PLATFORM_ROLES } from "../../../domain/principal.js";
import { Id } from "@gateway/contract";

export const PlatformRoleParams = z.object({ id: Id });
export type PlatformRoleParams = z.infer<typeof PlatformRoleParams>;

export const PlatformRoleRequest = z.strictObject({
  role: z.enum(PLATFORM_ROLES).nullable().describe("null removes the platform role"),
});
export type PlatformRoleRequest = z.infer<typeof PlatformRoleRequest>;

export const PlatformRoleResponse = z.object({
  data: z.object({ user_id: z.string(), platform_role: z.enum(PLATFORM_ROLES).nullable() }),
});
