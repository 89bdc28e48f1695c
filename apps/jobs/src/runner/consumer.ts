import type { Subjects } from "@gateway/events";
import { startWorkQueue, type JetStreamClient, type JetStreamManager, type RunningConsumer } from "@gateway/events-runtime";
import type { Logger } from "@gateway/logger";
import type { Registry } from "@gateway/metrics";
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

export type JobRunner = RunningConsumer;

/**
 * The job queue (docs/decisions/0103): the events kit's work queue (docs/decisions/0225) of
 * the `job.status_changed` events the outbox publishes. A message is acknowledged only after
 * its step's state is committed; a step that must wait (the chain has not shown the
 * delegation yet) is nak'ed with a delay, so the wait itself is kept by JetStream and
 * survives restarts; a failing step is nak'ed with backoff. Messages are never given up on
 * (no bound on deliveries): a job ends by its own deadline, not by a delivery count. A step
 * repeated for a status the job has left does nothing (the job's row dedupes).
 */
export function startJobRunner(options: JobRunnerOptions): Promise<JobRunner> {
  return startWorkQueue({
    js: options.js,
    jsm: options.jsm,
    subjects: options.subjects,
    durable: options.durable ?? "jobs-runner",
    type: "job.status_changed",
    concurrency: options.concurrency,
    ...(options.ackWaitMs !== undefined ? { ackWaitMs: options.ackWaitMs } : {}),
    logger: options.logger.child({ component: "job-runner" }),
    ...(options.registry ? { registry: options.registry } : {}),
    metric: { name: "job_steps_total", help: "Job steps run from the queue, by outcome (done, later, failed)." },
    describe: (event) => ({ job_id: event.data.job_id, status: event.data.to }),
    work: (event, { touch }) => options.step({ jobId: event.data.job_id, status: event.data.to, touch }),
  });
}
