import { describe, expect, it } from "vitest";
import { signAccessToken, verifyAccessToken } from "../identity/tokens.js";
import { signWidgetToken, verifyWidgetToken } from "./tokens.js";

const widget = { secret: "w".repeat(40), ttlSeconds: 900 };
const session = { secret: "s".repeat(40), accessTtlSeconds: 900, refreshTtlSeconds: 3600 };

describe("widget tokens", () => {
  it("round-trip their claims and expire within the configured lifetime", () => {
    const token = signWidgetToken({ sid: "wses_1", tid: "ten_1", cid: "chat_1" }, widget);
    const claims = verifyWidgetToken(token, widget.secret);
    expect(claims).toMatchObject({ sid: "wses_1", tid: "ten_1", cid: "chat_1" });
    expect(claims!.exp * 1000 - Date.now()).toBeLessThanOrEqual(900_000);
  });

  it("are not session tokens, and session tokens are not widget tokens, even under one secret", () => {
    const w = signWidgetToken({ sid: "wses_1", tid: "ten_1", cid: "chat_1" }, widget);
    const s = signAccessToken({ sub: "usr_1", sid: "ses_1" }, session);
    expect(verifyAccessToken(w, widget.secret)).toBeNull();
    expect(verifyAccessToken(w, session.secret)).toBeNull();
    expect(verifyWidgetToken(s, session.secret)).toBeNull();
    expect(verifyWidgetToken(s, widget.secret)).toBeNull();
    const sameSecret = signWidgetToken({ sid: "wses_1", tid: "ten_1", cid: "chat_1" }, { secret: session.secret, ttlSeconds: 60 });
    expect(verifyAccessToken(sameSecret, session.secret)).toBeNull();
  });

  it("refuse a wrong secret, an expired token and garbage", () => {
    const token = signWidgetToken({ sid: "wses_1", tid: "ten_1", cid: "chat_1" }, widget);
    expect(verifyWidgetToken(token, "x".repeat(40))).toBeNull();
    expect(verifyWidgetToken(signWidgetToken({ sid: "a", tid: "b", cid: "c" }, { ...widget, ttlSeconds: -1 }), widget.secret)).toBeNull();
    expect(verifyWidgetToken("a.b.c", widget.secret)).toBeNull();
    expect(verifyWidgetToken("", widget.secret)).toBeNull();
  });
});
