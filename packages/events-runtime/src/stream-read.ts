import type { JetStreamClient } from "nats";
import type { EventEnvelope, Subjects } from "@gateway/events";
import { messageEnvelopes } from "./publish.js";

/**
 * The envelopes a stream holds, in stream order and with batches unpacked (docs/decisions/0331),
 * read from the start by an ordered consumer: for tests and tools that check what was
 * published. `filter` narrows the subjects (default: every event). Reads until `enough`
 * answers true, or, without `enough`, until the stream's end as it was when reading
 * began; gives up at `timeoutMs` and answers what it has. Envelopes are as published, not checked.
 */
export async function readEnvelopes(
  js: JetStreamClient,
  subjects: Subjects,
  options: { filter?: string; enough?: (seen: EventEnvelope[]) => boolean; timeoutMs?: number } = {},
): Promise<EventEnvelope[]> {
  const consumer = await js.consumers.get(subjects.stream, { filterSubjects: options.filter ?? subjects.all });
  const seen: EventEnvelope[] = [];
  const until = Date.now() + (options.timeoutMs ?? 20_000);
  while (Date.now() < until) {
    const msg = await consumer.next({ expires: 1_000 });
    if (msg) for (const e of messageEnvelopes(subjects, msg)) seen.push(e as EventEnvelope);
    if (options.enough ? options.enough(seen) : !msg || msg.info.pending === 0) break;
  }
  return seen;
}
