import { AckPolicy, DeliverPolicy, nanos, type JsMsg } from "nats";
import { CONSUME_EXPIRES_MS, parseEnvelope, redeliveryDelayMs, type JetStreamClient, type JetStreamManager, type Subjects } from "@gateway/events";
import { newId } from "@gateway/ids";
import { runWithContext, type Logger } from "@gateway/logger";
import { Counter, type Registry } from "@gateway/metrics";
import type { StepOutcome } from "./advance-lease.js";

export type JobRunnerOptions = {
  js: JetStreamClient;
  jsm: JetStreamManager;
  subjects: Subjects;
  logger: Logger;
  registry?: Registry;
  /** Durable consumer name. */
  durable?: string;
  concurrency: number;
  ackWaitMs?: number;
  /** Runs the step a `job.status_changed` event asks for. `touch` tells JetStream the step is still working. */
  step: (input: { jobId: string; status: string; touch: () => void }) => Promise<StepOutcome>;
};

export type JobRunner = { stop(): Promise<void> };

/**
 * The job queue (docs/decisions/0103): a durable JetStream consumer of the
 * `job.status_changed` events the outbox publishes. A message is acknowledged
 * only after its step's state is committed; a step that must wait (the chain
 * has not shown the delegation yet) is nak'ed with a delay, so the wait itself
 * is kept by JetStream and survives restarts; a failing step is nak'ed with
 * backoff. Messages are never given up on (max_deliver unlimited): a job ends
 * by its own deadline, not by a delivery count.
 */
export async function startJobRunner(options: JobRunnerOptions): Promise<JobRunner> {
  const { js, jsm, subjects } = options;
  const durable = options.durable ?? "jobs-runner";
  const log = options.logger.child({ component: "job-runner" });
  const steps = options.registry
    ? new Counter({
        name: "job_steps_total",
        help: "Job steps run from the queue, by outcome (done, later, failed).",
        labelNames: ["outcome"],
        registers: [options.registry],
      })
    : undefined;
  const ackWait = nanos(options.ackWaitMs ?? 30_000);
  const filter = subjects.subject("job.status_changed");
  try {
    await jsm.consumers.add(subjects.stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ackWait,
      max_deliver: -1,
      filter_subject: filter,
    });
  } catch (err) {
    if (!/already (exists|in use)/i.test(String((err as Error).message))) throw err;
    await jsm.consumers.update(subjects.stream, durable, { ack_wait: ackWait, max_deliver: -1, filter_subject: filter });
  }
  const consumer = await js.consumers.get(subjects.stream, durable);
  const messages = await consumer.consume({ max_messages: options.concurrency, expires: CONSUME_EXPIRES_MS });
  const decoder = new TextDecoder();
  const active = new Set<Promise<void>>();
  let stopping = false;

  async function handle(msg: JsMsg): Promise<void> {
    let event: ReturnType<typeof parseEnvelope>;
    try {
      event = parseEnvelope(JSON.parse(decoder.decode(msg.data)));
    } catch (err) {
      log.error({ err: String(err), subject: msg.subject }, "malformed job event dropped");
      msg.term();
      return;
    }
    if (event.type !== "job.status_changed") {
      msg.ack();
      return;
    }
    const data = event.data as { job_id: string; to: string };
    await runWithContext({ requestId: event.request_id ?? newId("req") }, async () => {
      try {
        const outcome = await options.step({ jobId: data.job_id, status: data.to, touch: () => msg.working() });
        if (outcome.kind === "done") msg.ack();
        else msg.nak(outcome.delayMs);
        steps?.inc({ outcome: outcome.kind });
      } catch (err) {
        const attempt = msg.info.deliveryCount;
        steps?.inc({ outcome: "failed" });
        log.warn({ err, job_id: data.job_id, status: data.to, attempt }, "job step failed; will be retried");
        msg.nak(redeliveryDelayMs(attempt));
      }
    });
  }

  const loop = (async () => {
    for await (const msg of messages) {
      if (stopping) {
        msg.nak();
        continue;
      }
      const task = handle(msg).finally(() => active.delete(task));
      active.add(task);
      while (active.size >= options.concurrency) await Promise.race(active);
    }
  })().catch((err: unknown) => log.error({ err }, "job runner stream ended"));

  return {
    async stop() {
      stopping = true;
      await messages.close();
      await loop;
      await Promise.all(active);
    },
  };
}
