import { AppError } from "@gateway/errors";
import type { EdgeDeps } from "../deps.js";
import type { Access } from "../http/access.js";
import type { z } from "zod";
import { defineRoute, type HandlerContext, type HandlerResult, type Method, type ResponseSpec, type RouteDef } from "../http/route.js";
import type { Principal } from "../domain/principal.js";

/**
 * The short declaration of a forwarding route (docs/decisions/0253): a route that
 * validates its input, calls one gRPC method and encodes the answer. It is a
 * `defineRoute` underneath (same access check, validation, OpenAPI entry); what it
 * spares is the handler's frame: the RPC is `call`, the answer `answer`.
 *
 *   export const deleteChannel = forward(WRITE, "delete /v1/conversations/:id/channels/:channelId", {
 *     summary: "Detach a channel.",
 *     params: ChannelParams,
 *     responses: { 204: "removed", 404: "no such conversation or channel" },
 *     call: ({ deps, params, tenantId }) => deps.services.conversations.RemoveChannel({ tenant_id: tenantId, ... }),
 *     answer: noContent,
 *   });
 *
 * `answer` is written `(result) => ok(view(result))` (or `created`, `accepted`), `noContent`,
 * or, for a capped list, `(res, { query }) => listAnswer(res.items, view, res.next_cursor, query)`.
 */

/** What a resource's routes declare alike: the OpenAPI tags and the access. */
export type Audience = { tags: readonly string[]; access: Access };

/** A handler's context, with the caller's tenant (the key's, the session's or the widget's). */
export type ForwardContext<P, Q, B, H> = HandlerContext<EdgeDeps, P, Q, B, H> & { readonly tenantId: string };

/** A documented answer: its description, or `[description, body schema]`, or the full spec (headers, content type). */
export type Answers = Record<number, string | [string, z.ZodType] | ResponseSpec>;

export type ForwardDef<P, Q, B, H, R> = Omit<RouteDef<EdgeDeps, P, Q, B, H>, "method" | "path" | "tags" | "access" | "handler" | "responses"> & {
  responses: Answers;
  /** The one RPC (or domain verb) the route forwards to, from the validated input. */
  call: (ctx: ForwardContext<P, Q, B, H>) => Promise<R>;
  /** The HTTP answer from the call's result. */
  answer: (result: R, ctx: ForwardContext<P, Q, B, H>) => HandlerResult;
};

/** The tenant of the caller the route's access admitted (a public route has none). */
function tenantOf(principal: Principal): string {
  if (principal.kind === "anonymous") throw new AppError("unauthorized", "Sign in first.");
  return principal.tenantId;
}

function specs(answers: Answers): Record<number, ResponseSpec> {
  const out: Record<number, ResponseSpec> = {};
  for (const [status, answer] of Object.entries(answers)) {
    out[Number(status)] = typeof answer === "string" ? { description: answer } : Array.isArray(answer) ? { description: answer[0], schema: answer[1] } : answer;
  }
  return out;
}

/** Declares a forwarding route: `"<method> <path>"`, its audience, and what it calls and answers. */
export function forward<P = Record<string, never>, Q = Record<string, never>, B = undefined, H = Record<string, never>, R = unknown>(
  audience: Audience,
  endpoint: `${Method} /${string}`,
  def: ForwardDef<P, Q, B, H, R>,
): RouteDef<EdgeDeps, P, Q, B, H> {
  const [method, path] = endpoint.split(" ") as [Method, string];
  const { call, answer, responses, ...route } = def;
  return defineRoute<EdgeDeps, P, Q, B, H>({
    method,
    path,
    tags: [...audience.tags],
    access: audience.access,
    ...route,
    responses: specs(responses),
    async handler(ctx) {
      const full = Object.defineProperty(ctx, "tenantId", { get: () => tenantOf(ctx.principal) }) as ForwardContext<P, Q, B, H>;
      return answer(await call(full), full);
    },
  });
}

/** 200 with `{ data }`. */
export const ok = (data: unknown): HandlerResult => ({ status: 200, body: { data } });

/** 201 with `{ data }`. */
export const created = (data: unknown): HandlerResult => ({ status: 201, body: { data } });

/** 202 with `{ data }`. */
export const accepted = (data: unknown): HandlerResult => ({ status: 202, body: { data } });

/** 204, no body. */
export const noContent = (): HandlerResult => ({ status: 204 });
