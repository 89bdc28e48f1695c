import { describe, expect, it } from "vitest";
import { toCsv } from "./csv.js";

describe("toCsv", () => {
  it("quotes commas, quotes and line breaks, leaves numbers and empty cells plain", () => {
    const csv = toCsv(
      [
        { a: "plain", b: 12 },
        { a: 'say "hi", twice', b: null },
        { a: "two\nlines", b: -3 },
      ],
      [
        ["A", (r) => r.a],
        ["B", (r) => r.b],
      ],
    );
    expect(csv).toBe('A,B\r\nplain,12\r\n"say ""hi"", twice",\r\n"two\nlines",-3\r\n');
  });

  it("defuses text a spreadsheet would run as a formula", () => {
    expect(toCsv([{ a: "=HYPERLINK(1)" }, { a: "@SUM(A1)" }, { a: "-2+3" }], [["A", (r) => r.a]])).toBe("A\r\n'=HYPERLINK(1)\r\n'@SUM(A1)\r\n'-2+3\r\n");
  });
});
