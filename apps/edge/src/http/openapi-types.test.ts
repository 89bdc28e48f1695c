import { z } from "zod";
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "./openapi.js";
import { renderApiTypes, schemaType, type OpenApiDocument } from "./openapi-types.js";
import type { AnyRoute } from "./route.js";

const typeOf = (schema: z.ZodType) => schemaType(z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as Record<string, unknown>);

describe("schemaType", () => {
  it("renders what zod emits: objects, optional and nullable fields, enums, literals, arrays and records", () => {
    const schema = z.object({
      id: z.string(),
      "content-type": z.string().optional(),
      count: z.number().int().describe("How many */ there are."),
      state: z.enum(["a", "b"]),
      secret: z.literal("[redacted]"),
      when: z.string().nullable(),
      tags: z.array(z.string()),
      either: z.array(z.union([z.string(), z.number()])),
      meta: z.record(z.string(), z.unknown()),
      pair: z.tuple([z.string(), z.number()]),
      anything: z.unknown(),
    });
    expect(typeOf(schema)).toBe(
      [
        "{",
        "  id: string;",
        '  "content-type"?: string;',
        "  /** How many *\\/ there are. */",
        "  count: number;",
        '  state: "a" | "b";',
        '  secret: "[redacted]";',
        "  when: string | null;",
        "  tags: string[];",
        "  either: (string | number)[];",
        "  meta: Record<string, unknown>;",
        "  pair: [string, number];",
        "  anything: unknown;",
        "}",
      ].join("\n"),
    );
  });

  it("keeps an open object open and groups unions of objects inside arrays", () => {
    expect(typeOf(z.object({ a: z.string() }).catchall(z.unknown()))).toBe("{\n  a: string;\n  [key: string]: unknown;\n}");
    expect(typeOf(z.array(z.union([z.object({ a: z.string() }), z.object({ b: z.string() })])))).toBe("({\n  a: string;\n} | {\n  b: string;\n})[]");
    expect(schemaType({ $ref: "#/components/schemas/Error" })).toBe('Components["Error"]');
    expect(schemaType({ not: {} })).toBe("unknown");
  });
});

describe("renderApiTypes", () => {
  it("keys operations by method and path, with the JSON body and the union of successful answers", () => {
    const route = (r: Partial<AnyRoute<unknown>>) =>
      ({ method: "get", access: { kind: "public" }, responses: {}, handler: async () => ({ status: 200 }), ...r }) as AnyRoute<unknown>;
    const doc = buildOpenApi([
      route({
        method: "post",
        path: "/v1/things/:id",
        summary: "Make a thing.",
        body: z.strictObject({ name: z.string() }),
        responses: {
          201: { description: "made", schema: z.object({ data: z.object({ id: z.string() }) }) },
          207: { description: "partly", schema: z.object({ partial: z.boolean() }) },
        },
      }),
      route({ method: "delete", path: "/v1/things/:id", responses: { 204: { description: "gone" } } }),
      route({ path: "/metrics", responses: { 200: { description: "text", contentType: "text/plain" } } }),
    ]) as OpenApiDocument;
    const out = renderApiTypes(doc, { generator: "a test" });
    expect(out).toContain(
      '  /** Make a thing. */\n  "POST /v1/things/{id}": {\n    body: {\n      name: string;\n    };\n    response: {\n      data: {\n        id: string;\n      };\n    } | {\n      partial: boolean;\n    };\n  };',
    );
    expect(out).toContain('  "DELETE /v1/things/{id}": {\n    body: never;\n    response: undefined;\n  };');
    expect(out).toContain('  "GET /metrics": {\n    body: never;\n    response: string;\n  };');
    expect(out).toContain("export type Components = {\n  /** The flat error body");
  });
});
