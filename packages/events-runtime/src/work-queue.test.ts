import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import type { JetStreamManager, NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@gateway/logger";
import { Registry } from "@gateway/metrics";
import { subjectsFor, type EventEnvelope } from "@gateway/events";
import { connectNats, ensureStream, publishEnvelope, startWorkQueue, type WorkOutcome } from "./index.js";

const NATS = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const run = randomBytes(4).toString("hex");
const logLines: Record<string, unknown>[] = [];
const logger = createLogger({
  service: "work-queue-test",
  level: "info",
  destination: new Writable({
    write(c, _e, cb) {
      for (const l of String(c).split("\n")) if (l) logLines.push(JSON.parse(l));
      cb();
    },
  }),
});

let nc: NatsConnection;
let jsm: JetStreamManager;
let n = 0;

async function waitFor(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function newStream() {
  const subjects = subjectsFor(`wq${run}${++n}`);
  await ensureStream(jsm, subjects);
  return subjects;
}

const job = (id: string, eventId = `evt_${id}`): EventEnvelope<"job.status_changed"> => ({
  id: eventId,
  type: "job.status_changed",
  source: "test",
  occurred_at: new Date().toISOString(),
  request_id: null,
  data: { job_id: id, tenant_id: "ten_1", type: "tron.energy_lease", from: null, to: "pending", error_code: null },
});

/** Messages still waiting for an acknowledgement (or a redelivery) in the consumer. */
async function unacknowledged(subjects: ReturnType<typeof subjectsFor>, durable: string): Promise<number> {
  const info = await jsm.consumers.info(subjects.stream, durable);
  return info.num_ack_pending + info.num_pending;
}

beforeAll(async () => {
  nc = await connectNats(NATS, "work-queue-test");
  jsm = await nc.jetstreamManager();
});

afterAll(async () => {
  for (let i = 1; i <= n; i++) await jsm?.streams.delete(`wq${run}${i}_events`).catch(() => undefined);
  await nc?.drain();
});

describe("work queue", () => {
  it("acknowledges after the work is done, and shows a message that asked for later again after its delay, as the next attempt", async () => {
    const subjects = await newStream();
    const seen: { job: string; attempt: number; at: number }[] = [];
    const queue = await startWorkQueue({
      js: nc.jetstream(),
      jsm,
      subjects,
      durable: "later",
      type: "job.status_changed",
      concurrency: 4,
      logger,
      work: async (event, { attempt }): Promise<WorkOutcome> => {
        seen.push({ job: event.data.job_id, attempt, at: Date.now() });
        return event.data.job_id === "wait" && attempt === 1 ? { kind: "later", delayMs: 300 } : { kind: "done" };
      },
    });
    try {
      await publishEnvelope(nc.jetstream(), subjects, job("now"));
      await publishEnvelope(nc.jetstream(), subjects, job("wait"));
      await waitFor(() => seen.filter((s) => s.job === "wait").length === 2);
      await waitFor(async () => (await unacknowledged(subjects, "later")) === 0);
      const waits = seen.filter((s) => s.job === "wait");
      expect(waits.map((s) => s.attempt)).toEqual([1, 2]);
      expect(waits[1]!.at - waits[0]!.at).toBeGreaterThanOrEqual(250);
      expect(seen.filter((s) => s.job === "now")).toHaveLength(1);
    } finally {
      await queue.stop();
    }
  });

  it("retries work that failed after a delay that grows, and gives it up after its last delivery when deliveries are bounded", async () => {
    const subjects = await newStream();
    const registry = new Registry();
    const attempts: number[] = [];
    const times: number[] = [];
    const queue = await startWorkQueue({
      js: nc.jetstream(),
      jsm,
      subjects,
      durable: "failing",
      type: "job.status_changed",
      concurrency: 1,
      maxDeliver: 3,
      logger,
      registry,
      metric: { name: "test_work_total", help: "test" },
      describe: (event) => ({ job_id: event.data.job_id }),
      work: async (_event, { attempt }) => {
        attempts.push(attempt);
        times.push(Date.now());
        throw new Error("work failed on purpose");
      },
    });
    try {
      await publishEnvelope(nc.jetstream(), subjects, job("doomed"));
      await waitFor(() => attempts.length === 3);
      await waitFor(async () => (await unacknowledged(subjects, "failing")) === 0);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(attempts).toEqual([1, 2, 3]);
      // 1 s after the first failure, 2 s after the second.
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(900);
      expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(1_900);
      const values = (await registry.getSingleMetric("test_work_total")!.get()).values;
      expect(Object.fromEntries(values.map((v) => [v.labels.outcome, v.value]))).toEqual({ failed: 2, given_up: 1 });
      expect(logLines.some((l) => l.job_id === "doomed" && l.attempt === 3 && l.msg === "work failed on its last delivery; given up")).toBe(true);
    } finally {
      await queue.stop();
    }
  }, 30_000);

  it("works an event once while a copy of it is in flight, at most `concurrency` at once, and drops malformed messages", async () => {
    const subjects = await newStream();
    let running = 0;
    let most = 0;
    const worked: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const queue = await startWorkQueue({
      js: nc.jetstream(),
      jsm,
      subjects,
      durable: "copies",
      type: "job.status_changed",
      concurrency: 2,
      logger,
      work: async (event) => {
        running++;
        most = Math.max(most, running);
        worked.push(event.id);
        await gate;
        running--;
        return { kind: "done" };
      },
    });
    try {
      // The same event published twice under two message ids (a relay re-publishing after JetStream's window).
      await publishEnvelope(nc.jetstream(), subjects, job("a", "evt_same"));
      const copy = job("a", "evt_same");
      await nc.jetstream().publish(subjects.subject("job.status_changed"), new TextEncoder().encode(JSON.stringify(copy)), { msgID: "another_id" });
      await nc.jetstream().publish(subjects.subject("job.status_changed"), new TextEncoder().encode("{not json"), { msgID: "garbage" });
      for (const id of ["b", "c", "d"]) await publishEnvelope(nc.jetstream(), subjects, job(id));
      await waitFor(() => worked.length >= 2);
      await new Promise((r) => setTimeout(r, 300));
      release();
      await waitFor(async () => (await unacknowledged(subjects, "copies")) === 0);
      expect(worked.filter((id) => id === "evt_same")).toHaveLength(1);
      expect([...worked].sort()).toEqual(["evt_b", "evt_c", "evt_d", "evt_same"]);
      expect(most).toBe(2);
      expect(logLines.some((l) => l.consumer === "copies" && l.msg === "malformed event dropped")).toBe(true);
    } finally {
      await queue.stop();
    }
  });
});
