import { randomBytes } from "node:crypto";
import { headers as natsHeaders, NatsError, type JetStreamManager, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subjectsFor } from "@gateway/events";
import { connectNats, ensureStream, JetStreamPublisher, PublishError } from "./index.js";

const NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const run = randomBytes(4).toString("hex");
const subjects = subjectsFor(`jp${run}`);
const payload = new TextEncoder().encode("{}");

let nc: NatsConnection;
let jsm: JetStreamManager;

beforeAll(async () => {
  nc = await connectNats(NATS, "js-publisher-test");
  jsm = await nc.jetstreamManager();
  await ensureStream(jsm, subjects);
});

afterAll(async () => {
  await jsm.streams.delete(subjects.stream).catch(() => undefined);
  await nc.drain();
});

/** Counts the NatsErrors nats.js builds (each an Error: a stack capture) while `fn` runs. */
async function natsErrorsDuring(fn: () => Promise<unknown>): Promise<number> {
  const original = NatsError.errorForCode;
  let count = 0;
  NatsError.errorForCode = (...args: Parameters<typeof original>) => {
    count++;
    return original(...args);
  };
  try {
    await fn();
  } finally {
    NatsError.errorForCode = original;
  }
  return count;
}

describe("JetStreamPublisher", () => {
  it("publishes with the event id as message id, answers the stream's ack, and lets JetStream drop a copy", async () => {
    const publisher = new JetStreamPublisher(nc);
    const subject = subjects.subject("ledger.credited");
    const first = await publisher.publish(subject, payload, { msgID: `evt_${run}_1`, headers: natsHeaders(), timeout: 5_000 });
    const copy = await publisher.publish(subject, payload, { msgID: `evt_${run}_1`, headers: natsHeaders(), timeout: 5_000 });
    const second = await publisher.publish(subject, payload, { msgID: `evt_${run}_2`, headers: natsHeaders(), timeout: 5_000 });
    expect(first).toMatchObject({ stream: subjects.stream, duplicate: false });
    expect(copy).toMatchObject({ stream: subjects.stream, seq: first.seq, duplicate: true });
    expect(second.seq).toBe(first.seq + 1);
    expect(publisher.inFlight).toBe(0);
    publisher.close();
  });

  it("builds no Error for a publish that succeeds, where nats.js's js.publish builds one each", async () => {
    const publisher = new JetStreamPublisher(nc);
    const js = nc.jetstream();
    const subject = subjects.subject("ledger.credited");
    const n = 50;
    const viaJs = await natsErrorsDuring(() =>
      Promise.all(Array.from({ length: n }, (_, i) => js.publish(subject, payload, { msgID: `evt_${run}_js_${i}`, headers: natsHeaders(), timeout: 5_000 }))),
    );
    const viaPublisher = await natsErrorsDuring(() =>
      Promise.all(
        Array.from({ length: n }, (_, i) => publisher.publish(subject, payload, { msgID: `evt_${run}_p_${i}`, headers: natsHeaders(), timeout: 5_000 })),
      ),
    );
    expect(viaJs).toBe(n); // RequestOne.cancel(): NatsError(Cancelled) after every answer
    expect(viaPublisher).toBe(0);
    publisher.close();
  });

  it("fails a publish no stream takes (no responders), and one that gets no answer in time", async () => {
    const publisher = new JetStreamPublisher(nc);
    const err = await publisher.publish(`nostream${run}.x`, payload, { msgID: "evt_x", headers: natsHeaders(), timeout: 5_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PublishError);
    expect((err as PublishError).code).toBe("503");
    // A plain subscriber that never answers: the sweep times the publish out.
    const silent = nc.subscribe(`silent${run}.x`, { callback: () => undefined });
    await nc.flush();
    const started = Date.now();
    const late = await publisher.publish(`silent${run}.x`, payload, { msgID: "evt_y", headers: natsHeaders(), timeout: 300 }).catch((e: unknown) => e);
    expect((late as PublishError).code).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(publisher.inFlight).toBe(0);
    silent.unsubscribe();
    publisher.close();
  });
});
