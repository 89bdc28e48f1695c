import { z } from "zod";
import { PLATFORM_ROLES, TENANT_ROLES } from "../../../domain/principal.js";

export const ListUsersQuery = z.strictObject({
  email: z.string().trim().min(1).max(254).optional().describe("Only users whose email contains this text (case-insensitive)."),
});
export type ListUsersQuery = z.infer<typeof ListUsersQuery>;

export const UserListResponse = z.object({
  data: z
    .array(
      z.object({
        id: z.string(),
        email: z.string(),
        name: z.string().nullable(),
        tenant_id: z.string(),
        tenant_name: z.string(),
        tenant_role: z.enum(TENANT_ROLES),
        platform_role: z.enum(PLATFORM_ROLES).nullable(),
        created_at: z.string(),
      }),
    )
    .describe("Newest first, at most 200."),
});
