import { AppError } from "@gateway/errors";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { AnyRoute } from "./route.js";

/** An error handler as express calls it (the last middleware). */
export type ErrorHandler = (err: unknown, req: Request, res: Response, next: NextFunction) => void;

type Matcher = { route: AnyRoute<unknown>; pattern: RegExp; names: string[]; handler: RequestHandler };

/**
 * A route path as express 5 matches it (path-to-regexp 8 with express's
 * defaults): case-insensitive, an optional trailing slash, `:name` one
 * non-empty segment. Only literal segments and `:name` parameters are allowed
 * on the lean path; anything else is refused at start-up.
 */
export function pathPattern(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path
    .split("/")
    .map((segment) => {
      if (segment.startsWith(":")) {
        const name = segment.slice(1);
        if (!/^\w+$/.test(name)) throw new Error(`${path}: only plain :name parameters can take the lean path`);
        names.push(name);
        return "([^/]+?)";
      }
      if (!/^[\w.-]*$/.test(segment)) throw new Error(`${path}: only literal segments and :name parameters can take the lean path`);
      return segment.replace(/\./g, "\\.");
    })
    .join("/");
  return { pattern: new RegExp(`^${source}/?$`, "i"), names };
}

/**
 * The lean path of the hot routes (the metered invocation routes): one
 * middleware, first in the app, that runs the same conventions as the router
 * path (request id and span, in-flight count, metrics and access log, the JSON
 * body) and then the route's handler, without walking the app's middleware and
 * ~40 route layers of express's router for every call. Errors go to the same
 * error handler. Any other request passes on to the router untouched.
 *
 * A hot route must be the one the router would choose: start-up fails when a
 * route declared before it (with the same method) matches its path too.
 */
export function leanPath(options: {
  routes: AnyRoute<unknown>[];
  /** The conventions in the router's order, up to the route (request id, in-flight, metrics, body). */
  conventions: RequestHandler[];
  handlerOf(route: AnyRoute<unknown>): RequestHandler;
  errorHandler: ErrorHandler;
}): RequestHandler {
  const matchers: Matcher[] = [];
  options.routes.forEach((route, index) => {
    if (!route.hot) return;
    if (route.rawBody) throw new Error(`${route.path}: a route with a streamed body cannot take the lean path`);
    const { pattern, names } = pathPattern(route.path);
    const sample = route.path
      .split("/")
      .map((s) => (s.startsWith(":") ? "x" : s))
      .join("/");
    for (const earlier of options.routes.slice(0, index)) {
      if (earlier.method === route.method && pathPattern(earlier.path).pattern.test(sample)) {
        throw new Error(`${route.path}: ${earlier.path} is declared earlier and matches it too; it cannot take the lean path`);
      }
    }
    matchers.push({ route, pattern, names, handler: options.handlerOf(route) });
  });
  const { conventions, errorHandler } = options;
  if (matchers.length === 0) return (_req, _res, next) => next();

  return (req, res, next) => {
    const method = req.method.toLowerCase();
    const url = req.url;
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    let found: Matcher | undefined;
    let match: RegExpExecArray | null = null;
    for (const m of matchers) {
      if (m.route.method !== method) continue;
      match = m.pattern.exec(path);
      if (match) {
        found = m;
        break;
      }
    }
    if (!found || !match) {
      next();
      return;
    }
    const hot = found;
    const values = match;
    // Errors from here on (a body that is not JSON, a key refused) are written in the route's shape.
    if (hot.route.errorShape) req.errorShape = hot.route.errorShape;
    let i = 0;
    let answered = false;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null && err !== "route" && err !== "router") {
        errorHandler(err, req, res, () => undefined);
        return;
      }
      // A handler never passes a request on; if one did, it would be the router's 404.
      if (answered) {
        errorHandler(new AppError("not_found", `No route for ${req.method} ${path}.`), req, res, () => undefined);
        return;
      }
      if (i < conventions.length) {
        conventions[i++]!(req, res, step);
        return;
      }
      const params: Record<string, string> = {};
      try {
        hot.names.forEach((name, k) => {
          params[name] = decodeURIComponent(values[k + 1]!);
        });
      } catch (cause) {
        // As the router answers an undecodable parameter: a 400.
        errorHandler(Object.assign(new URIError(`Failed to decode param '${values[1]}'`), { status: 400, cause }), req, res, () => undefined);
        return;
      }
      req.params = params;
      // What the router sets for the route that answers: metrics and the span are named after it.
      (req as { route?: unknown }).route = { path: hot.route.path };
      answered = true;
      hot.handler(req, res, step);
    };
    step();
  };
}
