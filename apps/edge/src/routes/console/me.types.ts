import { z } from "zod";
import { PLATFORM_ROLES, TENANT_ROLES } from "../../domain/principal.js";

/** The signed-in user, as GET /console/me answers. */
export const MeResponse = z.object({
  data: z.object({
    user_id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    tenant_id: z.string(),
    tenant_role: z.enum(TENANT_ROLES),
    platform_role: z.enum(PLATFORM_ROLES).nullable(),
  }),
});
