import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signBody, verifySignature } from "./signature.js";

describe("signBody / verifySignature", () => {
  const secret = "a-callback-secret-of-16+";
  const body = '{"event":"job.updated","event_id":"evt_1"}';

  it("is sha256=<hex HMAC-SHA256(secret, raw body)>", () => {
    const hex = createHmac("sha256", secret).update(body).digest("hex");
    expect(signBody(secret, body)).toBe(`sha256=${hex}`);
    expect(signBody(secret, Buffer.from(body))).toBe(`sha256=${hex}`);
  });

  it("verifies the exact bytes only", () => {
    const header = signBody(secret, body);
    expect(verifySignature(secret, body, header)).toBe(true);
    expect(verifySignature(secret, `${body} `, header)).toBe(false);
    expect(verifySignature("another-secret-xxxxxx", body, header)).toBe(false);
    expect(verifySignature(secret, body, undefined)).toBe(false);
    expect(verifySignature(secret, body, "sha256=00")).toBe(false);
  });
});
