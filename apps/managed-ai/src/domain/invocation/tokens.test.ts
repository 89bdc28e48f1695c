import fc from "fast-check";
import { getEncoding, type Tiktoken } from "js-tiktoken";
import { describe, expect, it } from "vitest";
import { parseChatRequest } from "./chat-request.js";
import { schemaBytes } from "./schema-bytes.js";
import { chatInputBound, utf8Bytes, type ChatMessage, type ChatTool, type PromptOf } from "./tokens.js";

/*
 * The bound against a reference tokenizer (js-tiktoken, tests only; its ranks ship in
 * the package, so this runs offline). Two references, each must stay at or below the
 * bound: OpenAI's token-counting guide (3 per message, 1 per name, 3 to prime the
 * reply; for tools 7 per function + 3 per property + 3 per enum item … + 12, its
 * gpt-4o constants), and the prompt rendered in full in the formats OpenAI's models
 * read (ChatML for cl100k_base, harmony for o200k_base, tools as a TypeScript-like
 * namespace), special tokens counted one each.
 */
const encodings: [string, Tiktoken][] = [
  ["o200k_base", getEncoding("o200k_base")],
  ["cl100k_base", getEncoding("cl100k_base")],
];
// Text that contains a special token's spelling is text: providers escape it.
const count = (enc: Tiktoken, text: string) => enc.encode(text, [], []).length;

type Schema = { type?: string; description?: string; enum?: unknown[]; properties?: Record<string, Schema>; items?: Schema; required?: string[] };

const textOf = (m: ChatMessage) =>
  (typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? p.refusal ?? "").join("")) + (m.refusal ?? "");

/** OpenAI's guide, `num_tokens_from_messages` + `num_tokens_for_tools` (gpt-4o constants). */
function guideCount(enc: Tiktoken, prompt: PromptOf): number {
  let n = 3;
  for (const m of prompt.messages) {
    n += 3 + count(enc, m.role) + count(enc, textOf(m));
    if (m.name) n += count(enc, m.name) + 1;
    if (m.tool_call_id) n += count(enc, m.tool_call_id);
    for (const call of m.tool_calls ?? []) n += count(enc, call.id) + count(enc, call.function.name) + count(enc, call.function.arguments) + 3;
  }
  if (!prompt.tools?.length) return n;
  for (const tool of prompt.tools) {
    const f = tool.function as { name: string; description?: string; parameters?: Schema };
    n += 7 + count(enc, `${f.name}:${(f.description ?? "").replace(/\.$/, "")}`);
    const props = f.parameters?.properties ?? {};
    if (Object.keys(props).length > 0) {
      n += 3;
      for (const [key, p] of Object.entries(props)) {
        n += 3;
        if (p.enum) {
          n -= 3;
          for (const item of p.enum) n += 3 + count(enc, String(item));
        }
        n += count(enc, `${key}:${p.type ?? ""}:${(p.description ?? "").replace(/\.$/, "")}`);
      }
    }
  }
  return n + 12;
}

/** A JSON schema as the TypeScript-like type OpenAI's tool renderings use. */
function tsType(s: Schema | undefined, indent: string): string {
  if (!s) return "any";
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (s.type === "array") return `${tsType(s.items, indent)}[]`;
  if (s.type === "object" || s.properties) {
    const lines = Object.entries(s.properties ?? {}).map(([k, p]) => {
      const doc = p.description
        ? `${p.description
            .split("\n")
            .map((l) => `${indent}// ${l}\n`)
            .join("")}`
        : "";
      return `${doc}${indent}${k}${s.required?.includes(k) ? "" : "?"}: ${tsType(p, `${indent}  `)},\n`;
    });
    return `{\n${lines.join("")}${indent.slice(2)}}`;
  }
  return s.type === "integer" ? "number" : (s.type ?? "any");
}

/** The whole prompt as the model reads it; returns [text, special tokens]. */
function render(prompt: PromptOf, format: "chatml" | "harmony"): [string, number] {
  let text = "";
  let specials = 0;
  const msg = (head: string, body: string) => {
    text += format === "chatml" ? `${head}\n${body}\n` : `${head}${body}`;
    specials += format === "chatml" ? 2 : 3;
  };
  if (prompt.tools?.length) {
    const fns = prompt.tools.map((t) => {
      const f = t.function as { name: string; description?: string; parameters?: Schema };
      const args = f.parameters?.properties && Object.keys(f.parameters.properties).length > 0 ? `(_: ${tsType(f.parameters, "  ")}) => any` : "() => any";
      return `${f.description ? `// ${f.description}\n` : ""}type ${f.name} = ${args};\n\n`;
    });
    msg(format === "chatml" ? "system" : "developer", `# Tools\n\n## functions\n\nnamespace functions {\n\n${fns.join("")}} // namespace functions`);
  }
  const responseFormat = prompt.response_format as { json_schema?: { name: string; schema?: unknown } } | undefined;
  if (responseFormat?.json_schema)
    msg("developer", `# Response Formats\n\n## ${responseFormat.json_schema.name}\n\n${JSON.stringify(responseFormat.json_schema.schema)}`);
  const names = new Map<string, string>();
  for (const m of prompt.messages) {
    for (const call of m.tool_calls ?? []) {
      names.set(call.id, call.function.name);
      msg(`assistant to=functions.${call.function.name} commentary json`, call.function.arguments);
      specials += format === "harmony" ? 1 : 0; // <|channel|>
    }
    if (m.tool_call_id !== undefined) msg(`functions.${names.get(m.tool_call_id) ?? ""} to=assistant commentary`, textOf(m));
    else if (!m.tool_calls || textOf(m)) msg(`${m.role}${m.name ? ` name=${m.name}` : ""}`, textOf(m));
  }
  text += "assistant";
  specials += 1;
  return [text, specials];
}

function expectBounded(prompt: PromptOf, label: string): void {
  const bound = Number(chatInputBound(prompt).tokens);
  for (const [name, enc] of encodings) {
    expect(guideCount(enc, prompt), `${label}: guide, ${name}`).toBeLessThanOrEqual(bound);
    for (const format of ["chatml", "harmony"] as const) {
      const [text, specials] = render(prompt, format);
      expect(count(enc, text) + specials, `${label}: ${format}, ${name}`).toBeLessThanOrEqual(bound);
    }
  }
}

const ADVERSARIAL: Record<string, string> = {
  cjk: "東京都の天気は晴れ。北京今天下雨，明天多云。서울은 흐림. ".repeat(40),
  // Runs kept short: the reference's BPE is quadratic in a run without spaces.
  emoji: "🎉👩‍👩‍👧‍👦🏳️‍🌈🇫🇷✨🔥💯🙂".repeat(5) + " 🙂🙂🙂 🇫🇷🇫🇷".repeat(40),
  "long numbers": "31415926535897932384626433832795028841971693993751 ".repeat(30),
  "whitespace runs": `a${" ".repeat(500)}b\n\n\n\t\t\t${"\n".repeat(200)}c${"\u3000".repeat(100)}`,
  "special-token spellings": "<|im_start|>system<|im_end|><|endoftext|><|start|><|message|>".repeat(20),
  "combining marks": "e\u0301\u0302\u0303\u0304\u0305".repeat(100) + "ﷺ".repeat(50),
  "code and punctuation": "if(a&&b||!c){x[i++]=y?.z??0;}/*}}{{*/ ".repeat(50),
  "lone surrogates": "\ud800x\udfff".repeat(30),
  "rare scripts": "𐌰𐌱𐌲 ꦲꦏ᭟ ࿐ 𓀀𓀁 ".repeat(40),
  // About one token per byte: the case where the bound is tightest.
  "control characters": Array.from({ length: 600 }, (_, i) => String.fromCharCode(1 + ((i * 7) % 31))).join(""),
};

/** `text` in one place of a request at a time: each place must be counted on its own. */
function placesOf(text: string): [string, PromptOf][] {
  const call = (args: string, name = "f") => ({
    role: "assistant",
    content: null,
    tool_calls: [{ id: "c", type: "function", function: { name, arguments: args } }],
  });
  const items = text.match(/[\s\S]{1,5}/gu) ?? [];
  return [
    ["content", { messages: [{ role: "user", content: text }] }],
    ["text parts", { messages: [{ role: "system", content: items.map((t) => ({ type: "text", text: t })) }] }],
    ["name", { messages: [{ role: "user", name: text.slice(0, 128), content: "" }] }],
    ["refusal", { messages: [{ role: "assistant", content: "", refusal: text }] }],
    ["tool-call arguments", { messages: [call(text)] }],
    ["tool-call id", { messages: [{ ...call("{}"), tool_calls: [{ id: text, type: "function", function: { name: "f", arguments: "{}" } }] }] }],
    ["tool-call name", { messages: [call("{}", text)] }],
    ["tool result", { messages: [call("{}"), { role: "tool", tool_call_id: "c", content: text }] }],
    ["tool description", { tools: [{ type: "function", function: { name: "f", description: text } }], messages: [{ role: "user", content: "" }] }],
    [
      "property descriptions",
      {
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { p: { type: "string", description: text } } } } }],
        messages: [],
      },
    ],
    [
      "enum items",
      {
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { p: { type: "string", enum: items } } } } }],
        messages: [],
      },
    ],
    ["response schema", { messages: [], response_format: { type: "json_schema", json_schema: { name: "r", schema: { type: "string", description: text } } } }],
  ] as [string, PromptOf][];
}

const weather: ChatTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather for a city.\nUse Celsius unless asked.",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string", description: "City name, e.g. 東京" },
        unit: { type: "string", enum: ["c", "f", "k"], description: "Unit." },
        days: { type: "integer", description: "1-10" },
        tags: { type: "array", items: { type: "string", enum: Array.from({ length: 60 }, (_, i) => String(i)) } },
        where: { type: "object", properties: { lat: { type: "number" }, lon: { type: "number" } }, required: ["lat", "lon"] },
      },
      required: ["city"],
      additionalProperties: false,
    },
  },
};

describe("the input bound against a reference tokenizer", () => {
  for (const [label, text] of Object.entries(ADVERSARIAL)) {
    it(`holds on ${label}, in every place a request can carry text`, () => {
      for (const [place, prompt] of placesOf(text)) expectBounded(prompt, `${label} as ${place}`);
      expectBounded(
        {
          tools: [weather],
          messages: [
            { role: "user", content: text },
            {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city: text }) } }],
            },
            { role: "tool", tool_call_id: "call_1", content: text },
          ],
        } as PromptOf,
        `${label} in a tool turn`,
      );
    });
  }

  it("holds on tool definitions with long schemas: enums, nesting, descriptions with many lines", () => {
    const many: ChatTool[] = Array.from({ length: 20 }, (_, i) => ({
      type: "function",
      function: {
        name: `tool_${i}`,
        description: ADVERSARIAL.cjk!.slice(0, 40 * i) + "\n// ".repeat(i),
        parameters: {
          type: "object",
          properties: Object.fromEntries(
            Array.from({ length: i }, (_, j) => [
              `p${j}`,
              { type: "string", enum: Array.from({ length: 3 * j }, (_, k) => `v${k}`), description: "x\n".repeat(j) },
            ]),
          ),
        },
      },
    }));
    expectBounded({ tools: many, messages: [{ role: "user", content: "pick one" }] }, "twenty tools");
    expectBounded({ tools: [{ type: "function", function: { name: "a" } }], messages: [{ role: "user", content: "" }] }, "a tool without parameters");
  });

  it("holds where the framing is all there is: empty messages, bare tool calls and results, tools without parameters", () => {
    const calls = Array.from({ length: 50 }, (_, i) => ({ id: `${i}`, type: "function", function: { name: "a", arguments: "{}" } }));
    expectBounded(
      {
        tools: Array.from({ length: 30 }, () => ({ type: "function", function: { name: "a" } })),
        messages: [
          ...Array.from({ length: 100 }, () => ({ role: "user", content: "" })),
          { role: "assistant", content: null, tool_calls: calls },
          ...calls.map((c) => ({ role: "tool", tool_call_id: c.id, content: "" })),
        ],
      } as PromptOf,
      "framing only",
    );
  });

  it("holds on random text (fast-check), tools and tool calls included", () => {
    void fc.assert(
      fc.property(fc.fullUnicodeString({ maxLength: 200 }), fc.string({ unit: "binary", maxLength: 200 }), fc.json({ maxDepth: 3 }), (a, b, args) => {
        expectBounded(
          {
            tools: [
              {
                type: "function",
                function: { name: "f", description: b, parameters: { type: "object", properties: { [a || "k"]: { type: "string", description: a } } } },
              },
            ],
            messages: [
              { role: "user", content: a, name: "n" },
              { role: "assistant", content: b, tool_calls: [{ id: a, type: "function", function: { name: "f", arguments: args } }] },
              { role: "tool", tool_call_id: a, content: b },
            ],
          } as PromptOf,
          JSON.stringify([a, b]),
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe("the input bound's parts", () => {
  it("counts images apart, and every text the provider reads", () => {
    const base = chatInputBound({ messages: [{ role: "user", content: "hi" }] });
    expect(base).toEqual({ tokens: BigInt(3 + 4 + 4 + 2), imageParts: 0 });
    const withImages = chatInputBound({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "hi" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
            { type: "image_url", image_url: { url: "https://x.example/a.png" } },
          ] as never,
        },
      ],
    });
    // The URL is not text the model reads: only the parts' framing counts, images apart.
    expect(withImages).toEqual({ tokens: BigInt(3 + 4 + 4 + 2 + 3), imageParts: 2 });
    const grows = (prompt: PromptOf) => expect(chatInputBound(prompt).tokens).toBeGreaterThan(base.tokens);
    grows({ messages: [{ role: "user", content: "hi" }], tools: [weather] });
    grows({ messages: [{ role: "user", content: "hi" }], response_format: { type: "json_schema", json_schema: { name: "a", schema: {} } } });
    grows({ messages: [{ role: "user", content: "hi" }], tool_choice: { type: "function", function: { name: "f" } } });
    grows({ messages: [{ role: "user", content: "hi", name: "bob" }] });
  });

  it("charges a tool result the longest function name it may answer", () => {
    const long = "x".repeat(200);
    const call = { id: "c", type: "function", function: { name: long, arguments: "{}" } };
    const result = { role: "tool", tool_call_id: "c", content: "" };
    const withLong = chatInputBound({ messages: [{ role: "assistant", content: null, tool_calls: [call] }, result] } as PromptOf).tokens;
    const withShort = chatInputBound({
      messages: [{ role: "assistant", content: null, tool_calls: [{ ...call, function: { name: "f", arguments: "{}" } }] }, result],
    } as PromptOf).tokens;
    // The call's name (200 − 1 bytes more) and the result's name (200 instead of at least 64).
    expect(withLong - withShort).toBe(BigInt(200 - 1 + (200 - 64)));
  });

  it("inlines local $refs of tool parameters: a renderer that expands them reads that much", () => {
    const big = { type: "string", description: "d".repeat(1_000) };
    const inlined = { type: "object", properties: { a: big, b: big, c: big } };
    const referenced = { type: "object", $defs: { big }, properties: { a: { $ref: "#/$defs/big" }, b: { $ref: "#/$defs/big" }, c: { $ref: "#/$defs/big" } } };
    expect(schemaBytes(referenced)).toBeGreaterThanOrEqual(utf8Bytes(JSON.stringify(inlined)));
    // Recursive and dangling references end.
    const tree = { type: "object", properties: { children: { type: "array", items: { $ref: "#" } }, x: { $ref: "#/$defs/missing" } } };
    expect(schemaBytes(tree)).toBe(3 * utf8Bytes(JSON.stringify(tree)));
    // A chain of definitions that doubles at each step: counted in full, capped, never Infinity.
    const defs: Record<string, unknown> = { d0: { type: "string", description: "x".repeat(100) } };
    for (let i = 1; i < 80; i++) defs[`d${i}`] = { type: "object", properties: { l: { $ref: `#/$defs/d${i - 1}` }, r: { $ref: `#/$defs/d${i - 1}` } } };
    const exploding = { $defs: defs, $ref: "#/$defs/d79" };
    expect(schemaBytes(exploding)).toBe(Number.MAX_SAFE_INTEGER);
    const request = parseChatRequest({
      messages: [{ role: "user", content: "x" }],
      tools: [{ type: "function", function: { name: "f", parameters: exploding } }],
    });
    expect(request.inputTokens).toBe(BigInt(Number.MAX_SAFE_INTEGER));
  });
});
