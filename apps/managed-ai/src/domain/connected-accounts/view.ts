export type { ConnectedAccountView } from "../rows.js";
