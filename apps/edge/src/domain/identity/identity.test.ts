import jwt from "jsonwebtoken";
import { describe, expect, it } from "vitest";
import { hashPassword, verifyPassword } from "./passwords.js";
import { hashToken, newRefreshToken, signAccessToken, verifyAccessToken } from "./tokens.js";

const settings = { secret: "s".repeat(40), accessTtlSeconds: 60, refreshTtlSeconds: 3600 };

describe("passwords", () => {
  it("verify the right password only, with a fresh salt each time", async () => {
    const a = await hashPassword("correct horse battery");
    const b = await hashPassword("correct horse battery");
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toContain("correct horse battery");
    expect(await verifyPassword("correct horse battery", a)).toBe(true);
    expect(await verifyPassword("correct horse batterY", a)).toBe(false);
    expect(await verifyPassword("x", "not-a-hash")).toBe(false);
  });
});

describe("access tokens", () => {
  it("carry the user and session and verify with the right secret only", () => {
    const token = signAccessToken({ sub: "usr_1", sid: "ses_1" }, settings);
    expect(verifyAccessToken(token, settings.secret)).toEqual({ sub: "usr_1", sid: "ses_1" });
    expect(verifyAccessToken(token, "t".repeat(40))).toBeNull();
  });

  it("refuse expired tokens, other audiences, other algorithms and non-access tokens", () => {
    const expired = jwt.sign({ sid: "ses_1", typ: "access" }, settings.secret, {
      subject: "usr_1",
      issuer: "ai-gateway",
      audience: "ai-gateway:session",
      expiresIn: -10,
    });
    expect(verifyAccessToken(expired, settings.secret)).toBeNull();
    const otherAudience = jwt.sign({ sid: "ses_1", typ: "access" }, settings.secret, { subject: "usr_1", issuer: "ai-gateway", audience: "widget" });
    expect(verifyAccessToken(otherAudience, settings.secret)).toBeNull();
    const notAccess = jwt.sign({ sid: "ses_1", typ: "refresh" }, settings.secret, { subject: "usr_1", issuer: "ai-gateway", audience: "ai-gateway:session" });
    expect(verifyAccessToken(notAccess, settings.secret)).toBeNull();
    const unsigned = jwt.sign({ sid: "ses_1", typ: "access" }, "", {
      algorithm: "none",
      subject: "usr_1",
      issuer: "ai-gateway",
      audience: "ai-gateway:session",
    });
    expect(verifyAccessToken(unsigned, settings.secret)).toBeNull();
  });
});

describe("refresh tokens", () => {
  it("are random and stored only as a hash", () => {
    const a = newRefreshToken();
    const b = newRefreshToken();
    expect(a.token).not.toBe(b.token);
    expect(a.hash).toBe(hashToken(a.token));
    expect(a.hash).not.toContain(a.token);
  });
});
