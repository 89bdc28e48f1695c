import { ApiClient, browserStore } from "./api.js";
import type { DataOf } from "./api-types.js";

/** The one API client of the page: same origin as the gateway that serves the console. */
export const api = new ApiClient("", browserStore(window.localStorage));

export type Me = DataOf<"GET /console/me">;
