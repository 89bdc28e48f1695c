import { describe, expect, it } from "vitest";
import { newId } from "../ids.js";
import { ExternalId, FileId, ID_PATTERN_BODY, Id } from "./ids.js";

describe("Id", () => {
  it("takes 1 to 128 of A-Z a-z 0-9 _ -, and every minted id", () => {
    expect(Id.safeParse("a").success).toBe(true);
    expect(Id.safeParse("a".repeat(128)).success).toBe(true);
    expect(Id.safeParse(newId("key")).success).toBe(true);
    expect(Id.safeParse("Ab_9-z").success).toBe(true);
  });

  it("refuses empty, 129 characters and anything outside the class", () => {
    expect(Id.safeParse("").success).toBe(false);
    expect(Id.safeParse("a".repeat(129)).success).toBe(false);
    for (const bad of ["a b", "a.b", "a:b", "a/b", "é", "a\n"]) expect(Id.safeParse(bad).success, bad).toBe(false);
    expect(Id.safeParse(42).success).toBe(false);
    expect(Id.safeParse("a b").error?.issues[0]?.message).toBe("must be 1-128 of A-Z a-z 0-9 _ -");
  });

  it("embeds in larger patterns without its anchors", () => {
    const alias = new RegExp(`^ai-model:${ID_PATTERN_BODY}$`);
    expect(alias.test("ai-model:demo")).toBe(true);
    expect(alias.test(`ai-model:${"a".repeat(129)}`)).toBe(false);
  });
});

describe("FileId", () => {
  it("is file_ and the rest of a contract id, 128 characters in all", () => {
    expect(FileId.safeParse(newId("file")).success).toBe(true);
    expect(FileId.safeParse(`file_${"a".repeat(123)}`).success).toBe(true);
    expect(FileId.safeParse(`file_${"a".repeat(124)}`).success).toBe(false);
    expect(FileId.safeParse("file_").success).toBe(false);
    expect(FileId.safeParse("key_abc").success).toBe(false);
  });
});

describe("ExternalId", () => {
  it("also takes . : @ (emails, provider:user), 1 to 128", () => {
    expect(ExternalId.safeParse("ann@example.com").success).toBe(true);
    expect(ExternalId.safeParse("tg:12345").success).toBe(true);
    expect(ExternalId.safeParse("x".repeat(128)).success).toBe(true);
    expect(ExternalId.safeParse("x".repeat(129)).success).toBe(false);
    expect(ExternalId.safeParse("").success).toBe(false);
    expect(ExternalId.safeParse("a b").success).toBe(false);
  });
});
