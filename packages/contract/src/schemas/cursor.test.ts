import { describe, expect, it } from "vitest";
import { AppError, HTTP_STATUS } from "@gateway/errors";
import { Cursor, decodeCursor, encodeCursor } from "./cursor.js";
import { UNITS_MAX } from "./units.js";

function refusal(cursor: string): AppError {
  try {
    decodeCursor(cursor);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error(`${JSON.stringify(cursor)} decoded`);
}

describe("encodeCursor / decodeCursor", () => {
  it("round-trip every position, from 0 to int64's maximum", () => {
    for (const position of [0n, 1n, 42n, 10n ** 18n, UNITS_MAX]) expect(decodeCursor(encodeCursor(position))).toBe(position);
  });

  it("'' is the start", () => {
    expect(decodeCursor("")).toBeNull();
  });

  it("decodes the decimal cursors the feeds have always handed out", () => {
    expect(decodeCursor("17")).toBe(17n);
  });

  it("answers anything else with the contract's 400 invalid_request", () => {
    const legacyLedger = Buffer.from("seq:5").toString("base64url");
    for (const bad of ["-1", "01", "1.5", " 1", "abc", "9223372036854775808", "99999999999999999999", legacyLedger]) {
      const err = refusal(bad);
      expect(err.code, bad).toBe("invalid_request");
      expect(HTTP_STATUS[err.code]).toBe(400);
      expect(err.message).toBe("cursor must be a cursor this list returned (or empty for the start).");
    }
  });

  it("encodes only int64 positions", () => {
    expect(() => encodeCursor(-1n)).toThrow(RangeError);
    expect(() => encodeCursor(UNITS_MAX + 1n)).toThrow(RangeError);
  });
});

describe("Cursor (the request field)", () => {
  it("is an opaque string of at most 32 characters", () => {
    expect(Cursor.safeParse("").success).toBe(true);
    expect(Cursor.safeParse("x".repeat(32)).success).toBe(true);
    expect(Cursor.safeParse("x".repeat(33)).success).toBe(false);
  });
});
