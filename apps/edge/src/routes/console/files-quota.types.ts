/** The console quota answers with the files API's quota schema (one schema for both views). */
export { StorageQuotaResponse } from "../v1/files/quota.types.js";
