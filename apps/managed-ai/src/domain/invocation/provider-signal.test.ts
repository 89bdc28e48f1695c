import { describe, expect, it } from "vitest";
import { providerSignal } from "./provider-signal.js";

describe("providerSignal", () => {
  it("outlives the client of a metered call and aborts at the deadline", async () => {
    const client = new AbortController();
    const call = providerSignal({ signal: client.signal, deadline: new Date(Date.now() + 50) }, true);
    client.abort();
    call.clientGone();
    expect(call.signal.aborted).toBe(false);
    await new Promise((r) => setTimeout(r, 80));
    expect(call.signal.aborted).toBe(true);
    expect(call.reason()).toBe("deadline_exceeded");
    call.dispose();
  });

  it("aborts an unmetered call when its client leaves, also when it left already", () => {
    const client = new AbortController();
    const call = providerSignal({ signal: client.signal }, false);
    expect(call.signal.aborted).toBe(false);
    client.abort();
    expect(call.reason()).toBe("client_disconnected");
    const gone = providerSignal({ signal: client.signal }, false);
    expect(gone.reason()).toBe("client_disconnected");
    const sendFailed = providerSignal({ signal: new AbortController().signal }, false);
    sendFailed.clientGone();
    expect(sendFailed.reason()).toBe("client_disconnected");
    for (const c of [call, gone, sendFailed]) c.dispose();
  });

  it("takes no deadline, or one beyond what a timer can wait, as none", async () => {
    const calls = [
      providerSignal({ signal: new AbortController().signal }, true),
      providerSignal({ signal: new AbortController().signal, deadline: new Date(Date.now() + 30 * 24 * 3600 * 1000) }, true),
    ];
    await new Promise((r) => setTimeout(r, 20));
    for (const call of calls) {
      expect(call.signal.aborted).toBe(false);
      call.dispose();
    }
  });
});
