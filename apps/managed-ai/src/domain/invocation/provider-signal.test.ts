import { describe, expect, it } from "vitest";
import { providerSignal } from "./provider-signal.js";

describe("providerSignal", () => {
  it("outlives the client and aborts at the deadline", async () => {
    const client = new AbortController();
    const call = providerSignal({ deadline: new Date(Date.now() + 50) });
    client.abort();
    expect(call.signal.aborted).toBe(false);
    await new Promise((r) => setTimeout(r, 80));
    expect(call.signal.aborted).toBe(true);
    expect(call.reason()).toBe("deadline_exceeded");
    call.dispose();
  });

  it("takes no deadline, or one beyond what a timer can wait, as none", async () => {
    const calls = [providerSignal({}), providerSignal({ deadline: new Date(Date.now() + 30 * 24 * 3600 * 1000) })];
    await new Promise((r) => setTimeout(r, 20));
    for (const call of calls) {
      expect(call.signal.aborted).toBe(false);
      expect(call.reason()).toBeNull();
      call.dispose();
    }
  });
});
