import { z } from "zod";
import { Id } from "@gateway/contract";

export const CreateConnectedAccountRequest = z.strictObject({
  provider: z.string().regex(/^[a-z0-9_-]{1,64}$/, "must be 1-64 of a-z 0-9 _ - (e.g. openai, telegram)"),
  name: z.string().trim().min(1).max(200),
  secret: z.string().min(1).max(4096).describe("The credential (provider key, bot token): stored encrypted, never returned."),
});
export type CreateConnectedAccountRequest = z.infer<typeof CreateConnectedAccountRequest>;

export const ConnectedAccountParams = z.object({ id: Id });
export type ConnectedAccountParams = z.infer<typeof ConnectedAccountParams>;

export const ConnectedAccount = z.object({ id: z.string(), provider: z.string(), name: z.string(), created_at: z.string() });
export const ConnectedAccountResponse = z.object({ data: ConnectedAccount });
export const ConnectedAccountListResponse = z.object({ data: z.array(ConnectedAccount) });
