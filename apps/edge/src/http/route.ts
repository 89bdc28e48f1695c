import type { Request, Response } from "express";
import type { z } from "zod";
import type { Access } from "./access.js";
import type { Principal } from "../domain/principal.js";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/**
 * How a route writes its errors when its API has an error shape of its own
 * (Anthropic's Messages routes): the same statuses, codes and messages as the
 * contract's flat body, written another way. One shape per route, for every error
 * it answers (access, body, service), and its schema for the OpenAPI document.
 */
export type ErrorShape = {
  /** The component name of `schema` in the OpenAPI document. */
  name: string;
  schema: z.ZodType;
  /** The body for a status and the contract's flat body (ErrorBody of @gateway/errors). */
  body(status: number, flat: { error: string; message: string; request_id: string; [extra: string]: unknown }): unknown;
};

export type ResponseSpec = {
  description: string;
  /** Body schema; omitted for empty bodies (204) and non-JSON bodies. */
  schema?: z.ZodType;
  /** Non-JSON content type (e.g. "text/event-stream", "text/plain"). */
  contentType?: string;
  headers?: Record<string, string>;
};

export type HandlerContext<Deps, P, Q, B, H = Record<string, never>> = {
  req: Request;
  res: Response;
  deps: Deps;
  params: P;
  query: Q;
  body: B;
  /** The declared request headers, validated (absent ones undefined). */
  headers: H;
  principal: Principal;
  requestId: string;
};

/** What a handler returns; `written` when it wrote the response itself (streams). */
export type HandlerResult = { status: number; body?: unknown; headers?: Record<string, string> } | { written: true };

export type RouteDef<Deps, P = unknown, Q = unknown, B = unknown, H = unknown> = {
  method: Method;
  /** Express path, e.g. `/ops/ledger/tenants/:tenant_id/credits`. */
  path: string;
  summary: string;
  tags: string[];
  access: Access;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /**
   * `false`: `body` documents the body but the edge does not check it against
   * it; the body must only be present (parsed JSON), and is forwarded as
   * received to the service that owns its one schema (managed-ai for the
   * OpenAI-compatible invocation bodies: it knows the instance's mode and the
   * model's limits, so the edge's check could only disagree with it).
   */
  validateBody?: false;
  /**
   * The handler reads the request body itself, as a stream (uploads): the JSON
   * parser never touches it. The path must be static (no parameters).
   */
  rawBody?: { contentType: string; description: string };
  /**
   * The route takes the lean path (http/hot-path.ts): the same conventions and
   * checks, without express's router. For the metered invocation routes.
   */
  hot?: true;
  /**
   * The request headers the route reads, as a zod object keyed by the
   * header's canonical name (`Idempotency-Key`): validated like `query` (400
   * naming the header), handed to the handler as `headers`, and documented as
   * header parameters. Headers a route does not declare are not its input.
   */
  headers?: z.ZodType<H>;
  /** Errors in the route's own API shape instead of the contract's flat body (hot routes: from the first byte). */
  errorShape?: ErrorShape;
  responses: Record<number, ResponseSpec>;
  handler: (ctx: HandlerContext<Deps, P, Q, B, H>) => Promise<HandlerResult>;
};

// A route with its own parameter types, stored in a list of routes of any types.
// biome-ignore lint/suspicious/noExplicitAny: a list of routes of different parameter types; each route is checked where it is defined
export type AnyRoute<Deps> = RouteDef<Deps, any, any, any, any>;

/** Declares a route; the schemas type the handler and feed validation and OpenAPI alike. */
export function defineRoute<Deps, P = Record<string, never>, Q = Record<string, never>, B = undefined, H = Record<string, never>>(
  route: RouteDef<Deps, P, Q, B, H>,
): RouteDef<Deps, P, Q, B, H> {
  return route;
}
