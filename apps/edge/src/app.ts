import express, { type Express } from "express";
import type { EdgeDeps } from "./deps.js";
import type { Authenticators } from "./http/access.js";
import type { InFlight } from "./http/drain.js";
import { errorHandler, notFound } from "./http/errors.js";
import { buildOpenApi } from "./http/openapi.js";
import { observe } from "./http/observe.js";
import { registerRoutes } from "./http/register.js";
import { requestId } from "./http/request-id.js";
import type { AnyRoute } from "./http/route.js";

export type AppOptions = {
  deps: EdgeDeps;
  routes: AnyRoute<EdgeDeps>[];
  auth: Authenticators;
  inFlight: InFlight;
};

/** The edge's express app: conventions first (request id, metrics, body), then routes, then 404 and errors. */
export function createApp({ deps, routes, auth, inFlight }: AppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  // Client addresses come only from a trusted proxy's CLIENT_IP_HEADER, never X-Forwarded-For.
  app.set("trust proxy", false);
  app.set("query parser", "simple");
  app.use(requestId());
  app.use(inFlight.middleware());
  app.use(observe(deps.registry, deps.logger));
  app.use(
    express.json({
      limit: deps.env.BODY_LIMIT_BYTES,
      strict: true,
      type: ["application/json", "application/*+json"],
      verify: (req, _res, buf) => {
        (req as express.Request).rawBody = buf;
      },
    }),
  );
  deps.openapi = buildOpenApi(routes as AnyRoute<unknown>[], deps.env.PUBLIC_URL);
  registerRoutes(app, routes, { deps, auth });
  app.use(notFound());
  app.use(errorHandler(deps.logger));
  return app;
}
