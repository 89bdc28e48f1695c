export type { ConnectedAccountView } from "../rows.js";

export const ACCOUNT_COLUMNS = { id: true, tenantId: true, provider: true, name: true, createdAt: true } as const;
