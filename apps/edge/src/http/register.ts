import type { NextFunction, Request, Response, Router } from "express";
import { z } from "zod";
import { AppError, describeIssue } from "@gateway/errors";
import { setActor } from "@gateway/logger";
import { authorize, type Authenticators } from "./access.js";
import type { AnyRoute } from "./route.js";

function parsePart<T>(schema: z.ZodType<T> | undefined, value: unknown, part: string): T {
  if (!schema) return (part === "body" ? undefined : {}) as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const message = describeIssue(result.error);
  throw new AppError("invalid_request", part === "body" && value === undefined ? "A JSON body is required." : `${part} ${message}`);
}

/** The names of a route's declared headers (canonical), read once per route. */
function headerNames(schema: z.ZodType | undefined): string[] {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/** The declared headers as sent (by canonical name; absent ones undefined), for their schema. */
function declaredHeaders(names: string[], req: Request): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const name of names) headers[name] = req.header(name);
  return headers;
}

/** A body checked elsewhere (`validateBody: false`): here only present. */
function presentBody(value: unknown): unknown {
  if (value === undefined) throw new AppError("invalid_request", "A JSON body is required.");
  return value;
}

export type RegisterOptions<Deps> = {
  deps: Deps;
  auth: Authenticators;
};

/**
 * One route's request handler: the declared access is checked first (401/403
 * before any input is looked at), then params, query and body are validated
 * against the route's schemas (400 naming the field), then the declared
 * headers (400 naming the header), then the handler runs.
 */
export function routeHandler<Deps>(route: AnyRoute<Deps>, options: RegisterOptions<Deps>) {
  const names = headerNames(route.headers);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (route.errorShape) req.errorShape = route.errorShape;
    (async () => {
      const principal = await authorize(route.access, req, options.auth);
      if (principal.kind === "session") setActor(`user:${principal.userId}`);
      else if (principal.kind === "apiKey") setActor(`key:${principal.keyId}`);
      else if (principal.kind === "widget") setActor(`widget:${principal.sessionId}`);
      const params = parsePart(route.params, req.params, "path");
      const query = parsePart(route.query, req.query, "query");
      const body = route.validateBody === false ? presentBody(req.body) : parsePart(route.body, req.body, "body");
      const headers = parsePart(route.headers, declaredHeaders(names, req), "header");
      const result = await route.handler({ req, res, deps: options.deps, params, query, body, headers, principal, requestId: req.requestId });
      if ("written" in result) return;
      for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
      if (result.body === undefined) res.status(result.status).end();
      else res.status(result.status).json(result.body);
    })().catch(next);
  };
}

/** Mounts routes on the router, each through {@link routeHandler}. */
export function registerRoutes<Deps>(router: Router, routes: AnyRoute<Deps>[], options: RegisterOptions<Deps>): void {
  for (const route of routes) router[route.method](route.path, routeHandler(route, options));
}
