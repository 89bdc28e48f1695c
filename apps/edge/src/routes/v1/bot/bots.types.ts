import { z } from "zod";

/** A bot instance (docs/decisions/0122). */

export const BotView = z.object({ id: z.string(), name: z.string(), welcome_message: z.string().nullable(), created_at: z.string() });
export const CreateBotRequest = z.strictObject({ name: z.string().trim().min(1).max(128), welcome_message: z.string().max(4096).optional() });
export type CreateBotRequest = z.infer<typeof CreateBotRequest>;
