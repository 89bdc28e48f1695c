import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isTronAddress, tronAddress } from "./address.js";

describe("TRON addresses", () => {
  it("accepts base58check addresses of 0x41 accounts", () => {
    expect(isTronAddress("TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYH")).toBe(true);
    for (let i = 0; i < 20; i++) expect(isTronAddress(tronAddress(randomBytes(20)))).toBe(true);
  });

  it("refuses a wrong checksum, a wrong length, other characters and other prefixes", () => {
    expect(isTronAddress("TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZYh")).toBe(false);
    expect(isTronAddress("TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZY")).toBe(false);
    expect(isTronAddress("TLyqzVGLV1srkB7dToTAEqgDSfPtXRJZY0")).toBe(false);
    expect(isTronAddress("1BoatSLRHtKNngkdXEeobR76b53LETtpyT")).toBe(false);
    expect(isTronAddress("")).toBe(false);
  });
});
