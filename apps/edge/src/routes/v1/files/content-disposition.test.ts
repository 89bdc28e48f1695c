import { describe, expect, it } from "vitest";
import { contentDisposition, escapeHtml } from "./content-disposition.js";

/** Deterministic pseudo-random names mixing ASCII, quotes, controls, separators and non-ASCII. */
function* names(count: number): Generator<string> {
  const alphabet = [
    '"',
    "\\",
    ";",
    "%",
    "'",
    "\r",
    "\n",
    "\u0000",
    "\u007f",
    " ",
    "a",
    "Z",
    "0",
    ".",
    "é",
    "ж",
    "文",
    "😀",
    "\u202e",
    "=",
    "<",
    ">",
    "*",
    "(",
    ")",
  ];
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  for (let i = 0; i < count; i++) {
    let s = "";
    for (let n = 1 + (next() % 30); n > 0; n--) s += alphabet[next() % alphabet.length];
    yield s;
  }
}

describe("contentDisposition", () => {
  it("is one header line of printable ASCII for any name, and filename* gives the name back exactly", () => {
    for (const name of names(2000)) {
      const header = contentDisposition(name);
      expect(header).toMatch(/^[\x20-\x7e]+$/);
      const m = /^attachment; filename="([^"\\]*)"; filename\*=UTF-8''([A-Za-z0-9%!._~-]*)$/.exec(header);
      expect(m, header).not.toBeNull();
      expect(decodeURIComponent(m![2]!)).toBe(name);
    }
  });

  it("keeps plain names readable", () => {
    expect(contentDisposition("report 2026.pdf")).toBe(`attachment; filename="report 2026.pdf"; filename*=UTF-8''report%202026.pdf`);
    expect(contentDisposition('a"b\\c;d.txt')).toBe(`attachment; filename="a_b_c_d.txt"; filename*=UTF-8''a%22b%5Cc%3Bd.txt`);
  });
});

describe("escapeHtml", () => {
  it("leaves no markup-significant character", () => {
    expect(escapeHtml(`<img src=x onerror="alert('1')">&`)).toBe("&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;");
    for (const name of names(500)) expect(escapeHtml(name)).not.toMatch(/[<>"']/);
  });
});
