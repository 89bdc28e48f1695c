import type { Request } from "express";
import { describe, expect, it } from "vitest";
import { countHeader, declaredSize, filenameHeader } from "./upload-headers.js";

const req = (headers: Record<string, string | string[]>) => ({ headers }) as unknown as Request;

describe("filenameHeader", () => {
  it("reads raw UTF-8 bytes (as Node hands them over, latin1) as UTF-8", () => {
    expect(filenameHeader(req({ "x-filename": Buffer.from("отчёт 文.txt").toString("latin1") }))).toBe("отчёт 文.txt");
  });
  it("keeps a latin1 name that is not valid UTF-8", () => {
    expect(filenameHeader(req({ "x-filename": "caf\u00e9.txt" }))).toBe("café.txt");
  });
  it("decodes RFC 8187 UTF-8'' values", () => {
    expect(filenameHeader(req({ "x-filename": "UTF-8''r%C3%A9sum%C3%A9.pdf" }))).toBe("résumé.pdf");
    expect(filenameHeader(req({ "x-filename": "utf-8''a%20b" }))).toBe("a b");
  });
  it("refuses broken percent-encoding and repeated headers", () => {
    expect(() => filenameHeader(req({ "x-filename": "UTF-8''%E0%A4%A" }))).toThrow(/x-filename/);
    expect(() => filenameHeader(req({ "x-filename": ["a", "b"] }))).toThrow(/once/);
  });
  it("is empty when absent (the service's default applies)", () => {
    expect(filenameHeader(req({}))).toBe("");
  });
});

describe("countHeader", () => {
  it("accepts whole numbers from 1, 0 when absent", () => {
    expect(countHeader(req({ "x-expires-in": "3600" }), "x-expires-in", "n")).toBe(3600);
    expect(countHeader(req({ "x-max-downloads": " 1 " }), "x-max-downloads", "n")).toBe(1);
    expect(countHeader(req({}), "x-max-downloads", "n")).toBe(0);
  });
  it.each(["0", "-1", "1.5", "1e3", "", "abc", "99999999999", "2147483648", "1, 2"])("refuses %j naming the header", (value) => {
    expect(() => countHeader(req({ "x-max-downloads": value }), "x-max-downloads", "a whole number")).toThrow(/^x-max-downloads must be a whole number/);
  });
});

describe("declaredSize", () => {
  it("is the Content-Length, or -1 without one", () => {
    expect(declaredSize(req({ "content-length": "123" }))).toBe(123);
    expect(declaredSize(req({}))).toBe(-1);
  });
});
