import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestHub, type TestHub } from "../../testing/hub.js";
import { createWidgetSession } from "./create.js";
import { refreshWidgetSession } from "./refresh.js";
import { getWidgetSession, revokeWidgetSession } from "./revoke.js";

let hub: TestHub;
beforeAll(async () => {
  hub = await createTestHub();
});
afterAll(async () => hub?.close());

const open = (tenantId: string, visitorId: string) =>
  createWidgetSession({ ctx: hub.ctx, input: { tenantId, visitorId, displayName: "", botId: "", conversationId: "" } });

describe("widget sessions", () => {
  it("one chat per tenant and visitor; refresh tokens are stored as hashes", async () => {
    const a = await open("ten_1", "v1");
    const b = await open("ten_1", "v1");
    const c = await open("ten_2", "v1");
    expect(b.chatId).toBe(a.chatId);
    expect(c.chatId).not.toBe(a.chatId);
    expect(a.refreshToken).toMatch(/^wrt_/);
    const rows = await hub.ctx.prisma.widgetRefreshToken.findMany({ where: { sessionId: a.sessionId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(a.refreshToken);
    expect((await hub.outbox()).some((e) => JSON.stringify(e.payload).includes(a.refreshToken))).toBe(false);
  });

  it("rotates once per token; reuse revokes the session and announces it", async () => {
    const first = await open("ten_1", "v-rot");
    const r1 = await refreshWidgetSession({ ctx: hub.ctx, input: { refreshToken: first.refreshToken } });
    expect(r1.kind).toBe("rotated");
    if (r1.kind !== "rotated") return;
    expect(r1.grant.sessionId).toBe(first.sessionId);
    // Each rotation is a new generation, announced so that every edge refuses the previous access token.
    expect(first.generation).toBe(0);
    expect(r1.grant.generation).toBe(1);
    expect((await getWidgetSession({ ctx: hub.ctx, input: { sessionId: first.sessionId } })).generation).toBe(1);
    expect(hub.announced.filter((id) => id === first.sessionId)).toHaveLength(1);
    const reuse = await refreshWidgetSession({ ctx: hub.ctx, input: { refreshToken: first.refreshToken } });
    expect(reuse).toEqual({ kind: "reused", sessionId: first.sessionId });
    expect(hub.announced.filter((id) => id === first.sessionId)).toHaveLength(2);
    expect((await getWidgetSession({ ctx: hub.ctx, input: { sessionId: first.sessionId } })).revokedReason).toBe("refresh_reuse");
    // The rotated token of a revoked session is dead too.
    expect(await refreshWidgetSession({ ctx: hub.ctx, input: { refreshToken: r1.grant.refreshToken } })).toEqual({ kind: "invalid" });
    const types = (await hub.outbox()).filter((e) => e.payload.session_id === first.sessionId).map((e) => `${e.type}:${(e.payload.reason as string) ?? ""}`);
    expect(types).toEqual(["session.created:", "session.refreshed:", "session.revoked:refresh_reuse"]);
  });

  it("of concurrent uses of one token exactly one rotates", async () => {
    const s = await open("ten_1", "v-race");
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => refreshWidgetSession({ ctx: hub.ctx, input: { refreshToken: s.refreshToken } })));
    expect(outcomes.filter((o) => o.kind === "rotated")).toHaveLength(1);
    expect((await getWidgetSession({ ctx: hub.ctx, input: { sessionId: s.sessionId } })).generation).toBe(1);
  });

  it("expired and unknown tokens are invalid; revoke is tenant-scoped and idempotent", async () => {
    const s = await open("ten_1", "v-exp");
    await hub.ctx.prisma.widgetRefreshToken.updateMany({ where: { sessionId: s.sessionId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect(await refreshWidgetSession({ ctx: hub.ctx, input: { refreshToken: s.refreshToken } })).toEqual({ kind: "invalid" });
    expect(await refreshWidgetSession({ ctx: hub.ctx, input: { refreshToken: "wrt_unknown" } })).toEqual({ kind: "invalid" });
    await expect(revokeWidgetSession({ ctx: hub.ctx, input: { tenantId: "ten_2", sessionId: s.sessionId } })).rejects.toMatchObject({ code: "not_found" });
    expect(await revokeWidgetSession({ ctx: hub.ctx, input: { tenantId: "ten_1", sessionId: s.sessionId } })).toBe(true);
    expect(await revokeWidgetSession({ ctx: hub.ctx, input: { tenantId: "ten_1", sessionId: s.sessionId } })).toBe(false);
    expect(hub.announced).toContain(s.sessionId);
  });
});
