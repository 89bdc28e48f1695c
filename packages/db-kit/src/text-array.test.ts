import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { textArray, type ArrayElement } from "./text-array.js";

// node-postgres's own conversion of a parameter, as the driver applies it to an array.
const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as { prepareValue(value: unknown): unknown };

const TRICKY = ["", " ", "a b", "NULL", "null", "\\", '"', '\\"', "a,b", "{x}", "}", "é€😀", "\n\t", "'", 'a\\b"c\\\\', "0", "-1.5"];

/** A fixed pseudo-random sequence (no dependency on the run's seed). */
function* elements(count: number): Generator<ArrayElement> {
  let state = 0x2545f491;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  for (let i = 0; i < count; i++) {
    const r = next() % 8;
    if (r === 0) yield null;
    else if (r === 1) yield undefined;
    else if (r === 2) yield (next() % 2_000_000) - 1_000_000;
    else if (r === 3) yield next() % 2 === 0;
    else if (r === 4) yield BigInt(next()) * 1_000_000_007n;
    else if (r === 5) yield TRICKY[next() % TRICKY.length]!;
    else yield Array.from({ length: next() % 12 }, () => String.fromCharCode(32 + (next() % 95))).join("");
  }
}

describe("textArray", () => {
  it("is what node-postgres sends for the same array, element for element", () => {
    const all = [...elements(5_000)];
    for (let at = 0; at < all.length; at += 7) {
      const rows = all.slice(at, at + 1 + (at % 9)).map((value) => ({ value }));
      expect(textArray(rows, (r) => r.value)).toBe(prepareValue(rows.map((r) => r.value)));
    }
  });

  it("writes an empty batch, NULLs and escapes as the driver does", () => {
    expect(textArray([], () => "x")).toBe("{}");
    expect(textArray([null, undefined, "a"], (v) => v)).toBe('{NULL,NULL,"a"}');
    expect(textArray(['say "hi"', "back\\slash"], (v) => v)).toBe('{"say \\"hi\\"","back\\\\slash"}');
    expect(textArray(TRICKY, (v) => v)).toBe(prepareValue(TRICKY));
    expect(textArray([1, 2.5, true, 12n], (v) => v)).toBe(prepareValue([1, 2.5, true, 12n]));
  });
});
