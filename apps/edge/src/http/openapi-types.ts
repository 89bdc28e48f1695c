/**
 * Renders the OpenAPI document as TypeScript types: one entry per operation with its
 * JSON request body and its successful answer. The console imports the result
 * (`apps/console/src/api-types.ts`, written by `scripts/console-api-types.mjs`) instead
 * of declaring response shapes by hand (docs/decisions/0196).
 *
 * It covers the JSON Schema subset that zod's `toJSONSchema` emits for the edge's
 * schemas (type, properties, required, additionalProperties, items, prefixItems, enum,
 * const, anyOf, oneOf, allOf, $ref to components); anything else becomes `unknown`.
 */

type Schema = { [key: string]: unknown };
type Operation = {
  summary?: string;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
};
export type OpenApiDocument = {
  info?: { version?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
};

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const comment = (text: string, pad: string) => `${pad}/** ${text.replace(/\*\//g, "*\\/").replace(/\s*\n\s*/g, " ")} */\n`;
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));
const literal = (value: unknown) => JSON.stringify(value);
/** A union or intersection inside `T[]` or an intersection needs parentheses. */
function grouped(t: string): string {
  let depth = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t[i]!;
    if (c === "{" || c === "(" || c === "[" || c === "<") depth++;
    else if (c === "}" || c === ")" || c === "]" || c === ">") depth--;
    else if (c === '"') i = skipString(t, i);
    else if (t.startsWith("/**", i)) i = t.indexOf("*/", i) === -1 ? t.length : t.indexOf("*/", i) + 1;
    else if (depth === 0 && (c === "|" || c === "&")) return `(${t})`;
  }
  return t;
}

/** The index of the closing quote of the JSON string literal starting at `start`. */
function skipString(t: string, start: number): number {
  for (let i = start + 1; i < t.length; i++) {
    if (t[i] === "\\") i++;
    else if (t[i] === '"') return i;
  }
  return t.length;
}
const union = (types: string[]) => [...new Set(types)].join(" | ") || "never";

function refName(ref: string): string {
  const m = /^#\/components\/schemas\/(.+)$/.exec(ref);
  return m ? `Components[${literal(m[1])}]` : "unknown";
}

/** The TypeScript type of one JSON schema; `pad` is the indentation of the line it starts on. */
export function schemaType(schema: Schema | boolean | undefined, pad = ""): string {
  if (schema === undefined || schema === true) return "unknown";
  if (schema === false) return "never";
  if (typeof schema.$ref === "string") return refName(schema.$ref);
  if ("const" in schema) return literal(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
  for (const k of ["anyOf", "oneOf"] as const) {
    const members = schema[k];
    if (Array.isArray(members)) return union(members.map((m) => schemaType(m as Schema, pad)));
  }
  if (Array.isArray(schema.allOf)) return schema.allOf.map((m) => grouped(schemaType(m as Schema, pad))).join(" & ");
  if (Array.isArray(schema.type)) return union(schema.type.map((t) => schemaType({ ...schema, type: t }, pad)));
  switch (schema.type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      if (Array.isArray(schema.prefixItems)) return `[${schema.prefixItems.map((m) => schemaType(m as Schema, pad)).join(", ")}]`;
      return `${grouped(schemaType(schema.items as Schema | undefined, pad))}[]`;
    case "object":
      return objectType(schema, pad);
    default:
      return "unknown";
  }
}

function objectType(schema: Schema, pad: string): string {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const extra = schema.additionalProperties as Schema | boolean | undefined;
  const names = Object.keys(properties);
  if (names.length === 0) return extra === undefined || extra === false ? "Record<string, never>" : `Record<string, ${schemaType(extra, pad)}>`;
  const inner = `${pad}  `;
  let out = "{\n";
  for (const name of names) {
    const property = properties[name]!;
    if (typeof property.description === "string") out += comment(property.description, inner);
    out += `${inner}${key(name)}${required.has(name) ? "" : "?"}: ${schemaType(property, inner)};\n`;
  }
  // Named properties and an index signature must agree: the index signature is `unknown`.
  if (extra !== undefined && extra !== false) out += `${inner}[key: string]: unknown;\n`;
  return `${out}${pad}}`;
}

function jsonSchemaOf(content: Record<string, { schema?: Schema }> | undefined): Schema | undefined {
  return content?.["application/json"]?.schema;
}

/** The successful answers of an operation: JSON as typed, other media as text, none as `undefined`. */
function responseType(op: Operation, pad: string): string {
  const types: string[] = [];
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    if (!/^2\d\d$/.test(status)) continue;
    const json = jsonSchemaOf(response.content);
    if (json) types.push(schemaType(json, pad));
    else types.push(response.content && Object.keys(response.content).length > 0 ? "string" : "undefined");
  }
  return union(types);
}

/** The whole module: `Components`, `Api` (keyed `"METHOD /path/{param}"`) and helpers to read it. */
export function renderApiTypes(doc: OpenApiDocument, { generator }: { generator: string }): string {
  let out = `// Generated from the edge's OpenAPI document (version ${doc.info?.version ?? "?"}) by ${generator}.\n`;
  out += "// Do not edit: the edge's test fails when this file differs from what the routes declare.\n\n";
  out += "/** Schemas the operations refer to. */\nexport type Components = {\n";
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
    if (typeof schema.description === "string") out += comment(schema.description, "  ");
    out += `  ${key(name)}: ${schemaType(schema, "  ")};\n`;
  }
  out += "};\n\n";
  out += "/** Every operation: its JSON request body (`never` when it takes none) and its successful answer. */\nexport type Api = {\n";
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (op.summary) out += comment(op.summary, "  ");
      const body = jsonSchemaOf(op.requestBody?.content);
      out += `  ${literal(`${method.toUpperCase()} ${path}`)}: {\n`;
      out += `    body: ${body ? schemaType(body, "    ") : "never"};\n`;
      out += `    response: ${responseType(op, "    ")};\n`;
      out += "  };\n";
    }
  }
  out += "};\n\n";
  out += "export type Route = keyof Api;\n";
  out += '/** The successful answer of a route. */\nexport type ResponseOf<R extends Route> = Api[R]["response"];\n';
  out += '/** `data` of a wrapped answer (`{data: ...}`). */\nexport type DataOf<R extends Route> = Extract<ResponseOf<R>, { data: unknown }>["data"];\n';
  out += "/** One element of a route's `data` list. */\nexport type ItemOf<R extends Route> = DataOf<R> extends readonly (infer T)[] ? T : never;\n";
  out += '/** The JSON request body of a route. */\nexport type BodyOf<R extends Route> = Api[R]["body"];\n';
  return out;
}
