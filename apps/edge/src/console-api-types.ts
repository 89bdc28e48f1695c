import { buildOpenApi } from "./http/openapi.js";
import { renderApiTypes, type OpenApiDocument } from "./http/openapi-types.js";
import type { AnyRoute } from "./http/route.js";
import { routes } from "./routes/index.js";

/** The console's generated API types (from apps/edge/src or apps/edge/dist alike). */
export const CONSOLE_API_TYPES = new URL("../../console/src/api-types.ts", import.meta.url);

/** What `apps/console/src/api-types.ts` must contain: the types of the OpenAPI document this edge serves. */
export function renderConsoleApiTypes(): string {
  const doc = buildOpenApi(routes as AnyRoute<unknown>[]) as OpenApiDocument;
  return renderApiTypes(doc, { generator: "`pnpm --filter @gateway/edge run console-api-types`" });
}
