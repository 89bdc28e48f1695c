import { describe, expect, it } from "vitest";
import { signAccessToken, verifyAccessToken } from "../identity/tokens.js";
import jwt from "jsonwebtoken";
import { signWidgetToken, verifyWidgetToken, WIDGET_AUDIENCE } from "./tokens.js";

const widget = { secret: "w".repeat(40), ttlSeconds: 900 };
const session = { secret: "s".repeat(40), accessTtlSeconds: 900, refreshTtlSeconds: 3600 };

describe("widget tokens", () => {
  it("round-trip their claims and expire within the configured lifetime", () => {
    const token = signWidgetToken({ sid: "wses_1", tid: "ten_1", cid: "chat_1", gen: 0 }, widget);
    const claims = verifyWidgetToken(token, widget.secret);
    expect(claims).toMatchObject({ sid: "wses_1", tid: "ten_1", cid: "chat_1", gen: 0 });
    expect(claims!.exp * 1000 - Date.now()).toBeLessThanOrEqual(900_000);
  });

  it("are not session tokens, and session tokens are not widget tokens, even under one secret", () => {
    const w = signWidgetToken({ sid: "wses_1", tid: "ten_1", cid: "chat_1", gen: 0 }, widget);
    const s = signAccessToken({ sub: "usr_1", sid: "ses_1" }, session);
    expect(verifyAccessToken(w, widget.secret)).toBeNull();
    expect(verifyAccessToken(w, session.secret)).toBeNull();
    expect(verifyWidgetToken(s, session.secret)).toBeNull();
    expect(verifyWidgetToken(s, widget.secret)).toBeNull();
    const sameSecret = signWidgetToken({ sid: "wses_1", tid: "ten_1", cid: "chat_1", gen: 0 }, { secret: session.secret, ttlSeconds: 60 });
    expect(verifyAccessToken(sameSecret, session.secret)).toBeNull();
  });

  it("refuse a wrong secret, an expired token and garbage", () => {
    const token = signWidgetToken({ sid: "wses_1", tid: "ten_1", cid: "chat_1", gen: 0 }, widget);
    expect(verifyWidgetToken(token, "x".repeat(40))).toBeNull();
    expect(verifyWidgetToken(signWidgetToken({ sid: "a", tid: "b", cid: "c", gen: 0 }, { ...widget, ttlSeconds: -1 }), widget.secret)).toBeNull();
    expect(verifyWidgetToken("a.b.c", widget.secret)).toBeNull();
    expect(verifyWidgetToken("", widget.secret)).toBeNull();
  });

  it("are all distinct, even for one session in one second (a jti each), and carry the session's generation", () => {
    const claims = { sid: "wses_1", tid: "ten_1", cid: "chat_1", gen: 3 };
    const tokens = Array.from({ length: 20 }, () => signWidgetToken(claims, widget));
    expect(new Set(tokens).size).toBe(20);
    const ids = tokens.map((t) => verifyWidgetToken(t, widget.secret)!);
    expect(new Set(ids.map((c) => c.jti)).size).toBe(20);
    expect(new Set(ids.map((c) => c.exp)).size).toBeLessThanOrEqual(2);
    expect(ids.every((c) => c.gen === 3)).toBe(true);
  });

  it("refuse a token without a generation (signed before generations existed)", () => {
    const legacy = jwt.sign({ tid: "ten_1", cid: "chat_1", typ: "widget" }, widget.secret, {
      algorithm: "HS256",
      subject: "wses_1",
      issuer: "ai-gateway",
      audience: WIDGET_AUDIENCE,
      expiresIn: 60,
      jwtid: "x",
    });
    expect(verifyWidgetToken(legacy, widget.secret)).toBeNull();
  });
});
