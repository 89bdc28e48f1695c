import type { ConnectedAccount } from "../../generated/prisma/client.js";

/** A connected account as the service answers it: never the secret nor its ciphertext. */
export type ConnectedAccountView = Pick<ConnectedAccount, "id" | "tenantId" | "provider" | "name" | "createdAt">;

export const ACCOUNT_COLUMNS = { id: true, tenantId: true, provider: true, name: true, createdAt: true } as const;
