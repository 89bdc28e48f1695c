import { describe, expect, it } from "vitest";
import { contentText, countTokens, promptTokens, replyFor, truncateToTokens } from "./tokens.js";

describe("token rules", () => {
  it("counts ceil(UTF-8 bytes / 4)", () => {
    expect(countTokens("")).toBe(0);
    expect(countTokens("abcd")).toBe(1);
    expect(countTokens("abcde")).toBe(2);
    expect(countTokens("é")).toBe(1); // 2 bytes
    expect(countTokens("😀😀")).toBe(2); // 8 bytes
  });

  it("prompt: ceil(bytes of all contents / 4) + 3 per message + 3", () => {
    const messages = [
      { role: "system", content: "Be brief." }, // 9 bytes
      { role: "user", content: "Hello there" }, // 11 bytes
    ];
    expect(promptTokens(messages)).toBe(Math.ceil(20 / 4) + 3 * 2 + 3);
    expect(promptTokens([{ role: "user", content: [{ type: "text", text: "abcd" }, { type: "image_url" }] }])).toBe(1 + 3 + 3 + 85);
  });

  it("answers the last user message, deterministically", () => {
    expect(
      replyFor([
        { role: "user", content: "first" },
        { role: "assistant", content: "x" },
        { role: "user", content: "second" },
      ]),
    ).toBe("Mock reply to: second");
    expect(replyFor([{ role: "system", content: "only system" }])).toBe("Mock reply.");
    expect(contentText(42)).toBe("");
  });

  it("cuts a reply to at most max_tokens tokens on character boundaries", () => {
    expect(truncateToTokens("abcdefghij", undefined)).toEqual({ text: "abcdefghij", truncated: false });
    expect(truncateToTokens("abcdefghij", 2)).toEqual({ text: "abcdefgh", truncated: true });
    const cut = truncateToTokens("😀😀😀", 1);
    expect(cut).toEqual({ text: "😀", truncated: true });
    expect(countTokens(cut.text)).toBeLessThanOrEqual(1);
  });
});
