import { describe, expect, it } from "vitest";
import { WidgetSessions } from "./widget-sessions.js";

/** Messaging's view of one session, which a test rotates; `loads` counts GetWidgetSession calls. */
function fixture() {
  const state = { generation: 0, revoked: false, loads: 0 };
  const sessions = new WidgetSessions({
    conversations: {
      GetWidgetSession: async (req: { session_id: string }) => {
        state.loads += 1;
        return {
          id: req.session_id,
          tenant_id: "ten_1",
          chat_id: "chat_1",
          visitor_id: "v",
          conversation_id: "",
          revoked: state.revoked,
          generation: state.generation,
        };
      },
    } as never,
    tokens: { secret: "w".repeat(40), ttlSeconds: 900 },
    // A long cache, as on a replica that missed the broadcast.
    ttlMs: 300_000,
    broadcast: { listen: () => undefined, send: async () => undefined } as never,
  });
  const sign = (generation: number) => sessions.sign({ sessionId: "wses_1", tenantId: "ten_1", chatId: "chat_1", generation });
  return { state, sessions, sign };
}

describe("widget sessions: one live access token generation", () => {
  it("refuses the previous pair's access token once the session is rotated, and accepts the new one", async () => {
    const { state, sessions, sign } = fixture();
    const old = sign(0);
    expect(await sessions.authenticate(old)).toMatchObject({ kind: "widget", sessionId: "wses_1" });
    // Rotation: messaging is at generation 1; the edge that refreshed forgets its cache entry.
    state.generation = 1;
    await sessions.invalidate(["wses_1"]);
    const fresh = sign(1);
    expect(fresh).not.toBe(old);
    expect(await sessions.authenticate(old)).toBeNull();
    expect(await sessions.authenticate(fresh)).toMatchObject({ sessionId: "wses_1" });
  });

  it("a replica that missed the broadcast reloads when it meets a newer token, then refuses the old one", async () => {
    const { state, sessions, sign } = fixture();
    const old = sign(0);
    expect(await sessions.authenticate(old)).not.toBeNull();
    state.generation = 1;
    // No invalidation here: the cached entry still says generation 0.
    expect(await sessions.authenticate(old)).not.toBeNull();
    const loads = state.loads;
    expect(await sessions.authenticate(sign(1))).not.toBeNull();
    expect(state.loads).toBe(loads + 1);
    expect(await sessions.authenticate(old)).toBeNull();
  });

  it("two tokens signed for one session in the same second differ", () => {
    const { sign } = fixture();
    expect(sign(0)).not.toBe(sign(0));
  });
});
