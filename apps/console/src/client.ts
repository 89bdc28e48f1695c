import { ApiClient, browserStore } from "./api.js";

/** The one API client of the page: same origin as the gateway that serves the console. */
export const api = new ApiClient("", browserStore(window.localStorage));

export type Me = {
  user_id: string;
  email: string;
  name: string | null;
  tenant_id: string;
  tenant_role: "owner" | "admin" | "member";
  platform_role: "platform_admin" | "admin" | "finance" | null;
};
