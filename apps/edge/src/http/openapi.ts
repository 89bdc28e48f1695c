import { z } from "zod";
import { ERROR_CODES, HTTP_STATUS } from "@gateway/errors";
import type { Access } from "./access.js";
import type { AnyRoute } from "./route.js";

export const API_VERSION = "2026.09.22-managed-ai.1";

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as JsonSchema;
  delete json.$schema;
  return json;
}

const ErrorBody = z
  .object({
    error: z.enum(ERROR_CODES),
    message: z.string(),
    request_id: z.string(),
  })
  .catchall(z.unknown())
  .describe("The flat error body; services may add fields such as `pricing`.");

function security(access: Access): Record<string, string[]>[] {
  switch (access.kind) {
    case "public":
      return [];
    case "apiKey":
      return [{ apiKey: [] }, { apiKeyBearer: [] }];
    case "widget":
      return access.orApiKeyScope ? [{ widget: [] }, { apiKey: [] }, { apiKeyBearer: [] }] : [{ widget: [] }];
    default:
      return [{ session: [] }];
  }
}

/** Error statuses a route can answer with, from its declared access and inputs. */
function errorStatuses(route: AnyRoute<unknown>): number[] {
  const statuses = new Set<number>([500, 503]);
  if (route.params || route.query || route.body || route.headers) statuses.add(400);
  if (route.access.kind !== "public") statuses.add(401);
  if (route.access.kind === "tenant" || route.access.kind === "platform") statuses.add(403);
  if (route.access.kind === "apiKey" || (route.access.kind === "widget" && route.access.orApiKeyScope)) {
    statuses.add(403);
    statuses.add(429);
  }
  for (const status of Object.keys(route.responses).map(Number)) statuses.add(status);
  return [...statuses].filter((s) => s >= 400).sort();
}

function pathParameters(route: AnyRoute<unknown>): JsonSchema[] {
  const names = [...route.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
  const shape = route.params instanceof z.ZodObject ? (route.params.shape as Record<string, z.ZodType>) : {};
  return names.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: shape[name] ? schemaOf(shape[name], "input") : { type: "string" },
  }));
}

function queryParameters(route: AnyRoute<unknown>): JsonSchema[] {
  if (!(route.query instanceof z.ZodObject)) return [];
  return Object.entries(route.query.shape as Record<string, z.ZodType>).map(([name, schema]) => ({
    name,
    in: "query",
    required: !schema.safeParse(undefined).success,
    schema: schemaOf(schema, "input"),
  }));
}

function headerParameters(route: AnyRoute<unknown>): JsonSchema[] {
  if (!(route.headers instanceof z.ZodObject)) return [];
  return Object.entries(route.headers.shape as Record<string, z.ZodType>).map(([name, schema]) => {
    const { description, ...json } = schemaOf(schema, "input");
    return { name, in: "header", required: !schema.safeParse(undefined).success, ...(description ? { description } : {}), schema: json };
  });
}

/**
 * The OpenAPI 3.1 document, built from the same route declarations and zod
 * schemas that validate requests, so the document cannot drift from the code.
 */
export function buildOpenApi(routes: AnyRoute<unknown>[], serverUrl?: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, JsonSchema> = { Error: schemaOf(ErrorBody, "output") };
  for (const route of routes) {
    if (route.errorShape) schemas[route.errorShape.name] ??= schemaOf(route.errorShape.schema, "output");
    const errorRef = { $ref: `#/components/schemas/${route.errorShape?.name ?? "Error"}` };
    const path = route.path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");
    const responses: Record<string, unknown> = {};
    for (const [status, spec] of Object.entries(route.responses)) {
      const content = spec.schema
        ? { [spec.contentType ?? "application/json"]: { schema: schemaOf(spec.schema, "output") } }
        : spec.contentType
          ? { [spec.contentType]: { schema: { type: "string" } } }
          : Number(status) >= 400
            ? { "application/json": { schema: errorRef } }
            : undefined;
      responses[status] = {
        description: spec.description,
        ...(content ? { content } : {}),
        ...(spec.headers
          ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([h, d]) => [h, { description: d, schema: { type: "string" } }])) }
          : {}),
      };
    }
    for (const status of errorStatuses(route)) {
      if (responses[String(status)]) continue;
      const code = ERROR_CODES.find((c) => HTTP_STATUS[c] === status);
      responses[String(status)] = { description: code ?? "error", content: { "application/json": { schema: errorRef } } };
    }
    paths[path] ??= {};
    paths[path][route.method] = {
      operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      summary: route.summary,
      tags: route.tags,
      parameters: [...pathParameters(route), ...queryParameters(route), ...headerParameters(route)],
      ...(route.body ? { requestBody: { required: true, content: { "application/json": { schema: schemaOf(route.body, "input") } } } } : {}),
      ...(route.rawBody
        ? {
            requestBody: {
              required: true,
              description: route.rawBody.description,
              content: { [route.rawBody.contentType]: { schema: { type: "string", format: "binary" } } },
            },
          }
        : {}),
      responses,
      security: security(route.access),
      ...(route.access.kind === "apiKey" && route.access.scope ? { "x-required-scope": route.access.scope } : {}),
      ...(route.access.kind === "widget" && route.access.orApiKeyScope ? { "x-required-scope": route.access.orApiKeyScope } : {}),
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "AI Gateway",
      version: API_VERSION,
      description: "Metered AI models and application services behind one gateway. Money is in integer units of USD 0.0001.",
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths,
    components: {
      schemas,
      securitySchemes: {
        session: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "Access token from POST /auth/login." },
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "An API key from POST /console/keys." },
        apiKeyBearer: { type: "http", scheme: "bearer", description: "The same API key as a bearer token (for OpenAI-compatible SDKs)." },
        widget: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "Chat widget token from POST /v1/apps/bot/widget/auth (widget routes only).",
        },
      },
    },
    security: [],
  };
}
