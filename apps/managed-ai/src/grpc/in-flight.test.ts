import { describe, expect, it } from "vitest";
import { InFlight } from "./in-flight.js";

describe("InFlight", () => {
  it("drains at once when idle, and otherwise once every tracked piece of work has settled, either way", async () => {
    const inFlight = new InFlight();
    await inFlight.drain();
    let finish!: () => void;
    let fail!: (err: Error) => void;
    const a = inFlight.track(new Promise<void>((r) => (finish = r)));
    const b = inFlight.track(new Promise<void>((_, r) => (fail = r)));
    b.catch(() => undefined);
    expect(inFlight.size).toBe(2);
    let drained = false;
    const draining = inFlight.drain().then(() => (drained = true));
    finish();
    await a;
    await new Promise((r) => setImmediate(r));
    expect(drained).toBe(false);
    fail(new Error("provider failed"));
    await draining;
    expect(inFlight.size).toBe(0);
  });
});
