const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");

/**
 * The bytes of a JSON schema's compact JSON once every local `$ref` (`#`,
 * `#/$defs/X`, `#/definitions/X`, any JSON pointer into the schema) is replaced
 * by what it points at, recursively: a provider that renders tool parameters
 * with references inlined reads that much (docs/decisions/0206). A reference
 * met again inside its own expansion (a recursive schema) cannot be inlined and
 * counts its target once more; a remote reference counts as written (providers
 * do not fetch them). Iterative, so a deeply nested schema cannot overflow the
 * stack here.
 */
export function schemaBytes(schema: unknown): number {
  const memo = new Map<string, number>();
  const open = new Set<string>();

  const resolve = (ref: string): unknown => {
    if (ref === "#") return schema;
    let node: unknown = schema;
    for (const raw of ref.slice(2).split("/")) {
      const key = decodeURIComponent(raw).replaceAll("~1", "/").replaceAll("~0", "~");
      if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
      node = (node as Record<string, unknown>)[key];
    }
    return node;
  };

  const expansion = (ref: string): number => {
    const known = memo.get(ref);
    if (known !== undefined) return known;
    const target = resolve(ref);
    if (target === undefined) return 0;
    const raw = bytesOf(target);
    if (open.has(ref)) return raw;
    open.add(ref);
    const size = Math.min(raw + refsWithin(target), Number.MAX_SAFE_INTEGER);
    open.delete(ref);
    memo.set(ref, size);
    return size;
  };

  const refsWithin = (root: unknown): number => {
    let extra = 0;
    const stack: unknown[] = [root];
    while (stack.length > 0) {
      const node = stack.pop();
      if (typeof node !== "object" || node === null) continue;
      if (Array.isArray(node)) {
        for (const item of node) stack.push(item);
        continue;
      }
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && (value === "#" || value.startsWith("#/"))) extra += expansion(value);
        else stack.push(value);
      }
    }
    return extra;
  };

  return Math.min(bytesOf(schema) + refsWithin(schema), Number.MAX_SAFE_INTEGER);
}
