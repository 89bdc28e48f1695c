// The events runtime: outbox, relay, consumers, work queue, the loop they run on. The catalog,
// envelopes and subjects they carry are `@gateway/events` (docs/decisions/0260).
export { redeliveryDelayMs, startConsumer, type ConsumerOptions, type EventHandler, type RunningConsumer } from "./consumer.js";
export {
  connectNats,
  ensureStream,
  isNotFound,
  CONSUME_EXPIRES_MS,
  DUPLICATE_WINDOW_MS,
  STREAM_MAX_AGE_MS,
  type JetStreamClient,
  type JetStreamManager,
  type NatsConnection,
} from "./nats.js";
export {
  createTransact,
  enqueueEvent,
  outboxInsertFrom,
  outboxRow,
  poolStatements,
  type Emit,
  type EmitOptions,
  type OutboxRow,
  type Statements,
  type Transact,
} from "./outbox.js";
export { outboxTable, Relay, type RelayOptions, type RelaySource } from "./relay.js";
export { checkpointMoves, CheckpointMoves, LOG_RELAY_SETTINGS, logRelaySelect, tailedLog, type TailedLogOptions } from "./tailed-log.js";
export { startWorkQueue, type WorkOutcome, type WorkQueueOptions } from "./work-queue.js";
export { startCheckpointConsumer, type CheckpointConsumerOptions } from "./checkpoint-consumer.js";
export { OUTBOX_PRISMA_MODELS, type SqlExecutor, type TxRunner } from "./sql.js";
export { BATCH_MAX_BYTES, BATCH_MAX_EVENTS, messageEnvelopes, publishEnvelope, publishStored, type StoredEvent } from "./publish.js";
export { readEnvelopes } from "./stream-read.js";
export { JetStreamPublisher, PublishError, type JsPublish } from "./js-publisher.js";
export { pgTransactions, type PoolLike } from "./pg.js";
export { Broadcast } from "./broadcast.js";
export { BatchLoop, type BatchLoopOptions } from "./batch-loop.js";
