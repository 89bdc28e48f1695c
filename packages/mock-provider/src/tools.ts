/**
 * The mock's tool calls: when a request offers tools (and `tool_choice` is not
 * "none") and no tool result answers the last assistant turn, the model calls a tool: the
 * one `tool_choice` names, else the first, with arguments made from its parameter
 * schema (`exampleOf`), so an agent framework's validation accepts them. After
 * tool results (even with a user's note or a system turn after them, as Claude Code
 * sends) it answers in text. A test may dictate the calls instead
 * (`Behaviour.toolCalls`).
 */
export type ToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };
export type ToolDefinition = { type?: string; function?: { name?: string; parameters?: unknown } };
export type CallSpec = { name: string; arguments: string };

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  default?: unknown;
};

/** A value that satisfies a plain JSON schema: strings "mock", numbers 1, booleans true, every object property filled. */
export function exampleOf(schema: unknown, depth = 0): unknown {
  const s = (schema ?? {}) as Schema;
  if (depth > 8) return null;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if (s.default !== undefined) return s.default;
  const union = s.anyOf ?? s.oneOf;
  if (Array.isArray(union) && union.length > 0) return exampleOf(union[0], depth + 1);
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "string":
      return "mock";
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return true;
    case "null":
      return null;
    case "array":
      return [exampleOf(s.items, depth + 1)];
    default:
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, exampleOf(v, depth + 1)]));
  }
}

/** The calls the mock makes for a request, or null when it answers in text. */
export function toolCallsFor(
  /** `answered`: tool results answer the last assistant turn (the model then answers in text). */
  request: { tools: ToolDefinition[]; toolChoice: unknown; answered: boolean },
  idPrefix: string,
  dictated?: CallSpec[],
): ToolCall[] | null {
  const functions = request.tools.filter((t) => typeof t.function?.name === "string");
  if (functions.length === 0 || request.toolChoice === "none" || request.answered) return null;
  const named = (request.toolChoice as { function?: { name?: unknown } } | undefined)?.function?.name;
  const chosen = functions.find((t) => t.function?.name === named) ?? functions[0]!;
  const specs = dictated ?? [{ name: chosen.function!.name!, arguments: JSON.stringify(exampleOf(chosen.function!.parameters)) }];
  return specs.map((spec, i) => ({ id: `call_${idPrefix}_${i}`, type: "function", function: { name: spec.name, arguments: spec.arguments } }));
}
