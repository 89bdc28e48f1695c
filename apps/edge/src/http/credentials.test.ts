import { describe, expect, it } from "vitest";
import { credentialsOf } from "./credentials.js";

const of = (headers: Record<string, string | string[]>) => credentialsOf({ headers });

describe("credentialsOf", () => {
  it("reads the Bearer value of Authorization, and nothing from another scheme", () => {
    expect(of({ authorization: "Bearer abc" }).bearer).toBe("abc");
    expect(of({ authorization: "bearer  abc  " }).bearer).toBe("abc");
    expect(of({ authorization: "Basic abc" }).bearer).toBeUndefined();
    expect(of({ authorization: "Bearer a b" }).bearer).toBeUndefined();
    expect(of({}).bearer).toBeUndefined();
  });

  it("takes the key from X-API-Key first, then Authorization: Bearer", () => {
    expect(of({ "x-api-key": "k1", authorization: "Bearer k2" }).key).toBe("k1");
    expect(of({ "x-api-key": ["k1", "k3"] }).key).toBe("k1");
    expect(of({ "x-api-key": "  ", authorization: "Bearer k2" }).key).toBe("k2");
    expect(of({ authorization: "Bearer k2" }).key).toBe("k2");
    expect(of({ authorization: "Basic abc" }).key).toBeUndefined();
    expect(of({}).key).toBeUndefined();
  });

  it("decides once whether the caller presents a key: X-API-Key, or a Bearer value that is not a JWT", () => {
    expect(of({ "x-api-key": "" }).presentsKey).toBe(true);
    expect(of({ authorization: "Bearer gw_abc_def" }).presentsKey).toBe(true);
    expect(of({ authorization: "Bearer a.b.c" }).presentsKey).toBe(false);
    expect(of({ authorization: "Basic abc" }).presentsKey).toBe(false);
    expect(of({}).presentsKey).toBe(false);
  });
});
