import { join } from "node:path";
import express, { type Express } from "express";
import type { EdgeDeps } from "./deps.js";
import type { Authenticators } from "./http/access.js";
import type { InFlight } from "./http/drain.js";
import { errorHandler, notFound } from "./http/errors.js";
import { buildOpenApi } from "./http/openapi.js";
import { observe, pathRedactor } from "./http/observe.js";
import { leanPath } from "./http/hot-path.js";
import { jsonBody } from "./http/json-body.js";
import { registerRoutes, routeHandler } from "./http/register.js";
import { requestId } from "./http/request-id.js";
import type { AnyRoute } from "./http/route.js";
import { mountConsoleUi } from "./http/console-ui.js";
import { mountWidgetScript, widgetCors } from "./http/widget-script.js";

export type AppOptions = {
  deps: EdgeDeps;
  routes: AnyRoute<EdgeDeps>[];
  auth: Authenticators;
  inFlight: InFlight;
  /** Directory of the built web console to serve under /app/ (and its widget.js at /widget.js); absent: none. */
  consoleDir?: string;
};

/** Routing is case-insensitive and ignores a trailing slash; so is this key. */
function routeKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.toLowerCase().replace(/\/+$/, "")}`;
}

function streamedBodyRoutes(routes: AnyRoute<EdgeDeps>[]): Set<string> {
  const keys = new Set<string>();
  for (const route of routes.filter((r) => r.rawBody)) {
    if (route.path.includes(":")) throw new Error(`${route.path}: a route with a streamed body must have a static path`);
    keys.add(routeKey(route.method, route.path));
  }
  return keys;
}

/**
 * The edge's express app: conventions first (request id, metrics, body), then
 * routes, then 404 and errors. Hot routes (the metered invocation routes) take
 * the lean path, mounted first: the same conventions and error handler,
 * without the router's walk through every layer (http/hot-path.ts).
 */
export function createApp({ deps, routes, auth, inFlight, consoleDir }: AppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // Client addresses come only from a trusted proxy's CLIENT_IP_HEADER, never X-Forwarded-For.
  app.set("trust proxy", false);
  app.set("query parser", "simple");
  // Secret path segments (file tokens) are found from the route patterns, for every log line.
  const redact = pathRedactor(routes.map((r) => r.path));
  const json = jsonBody(deps.env.BODY_LIMIT_BYTES);
  // Routes that stream their body (uploads) are never parsed, whatever the Content-Type.
  const streamed = streamedBodyRoutes(routes);
  const body: express.RequestHandler = (req, res, next) => (streamed.has(routeKey(req.method, req.path)) ? next() : json(req, res, next));
  const conventions = [requestId(), inFlight.middleware(), observe(deps.registry, deps.logger, redact)];
  const errors = errorHandler(deps.logger, redact);
  const options = { deps, auth };
  app.use(
    leanPath({
      routes: routes as AnyRoute<unknown>[],
      conventions: [...conventions, json],
      handlerOf: (route) => routeHandler(route as AnyRoute<EdgeDeps>, options),
      errorHandler: errors,
    }),
  );
  for (const convention of conventions) app.use(convention);
  // Cross-origin answers for the chat widget's routes only (decision 0178).
  app.use(widgetCors());
  app.use(body);
  deps.openapi = buildOpenApi(routes as AnyRoute<unknown>[], deps.env.PUBLIC_URL);
  registerRoutes(app, routes, options);
  if (consoleDir) {
    mountConsoleUi(app, consoleDir, deps.logger);
    mountWidgetScript(app, join(consoleDir, "widget.js"), deps.logger);
  }
  app.use(notFound());
  app.use(errors);
  return app;
}
