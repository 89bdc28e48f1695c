import { z } from "zod";

/** Integer units of USD 0.0001 as a decimal string (int64-safe in JSON). */
const units = z.string().regex(/^-?\d+$/);

/** Who made an operator change: the authenticated caller (`user:<id>`). */
const actor = z.string().min(1);
const change = z.enum(["created", "updated"]);

/** What every ledger event of a hold names first: the tenant, the hold, the entry that moved it and the operation id. */
const holdMovement = { tenant_id: z.string(), hold_id: z.string(), entry_id: z.string(), operation_id: z.string() };
/** What both events of an instance change (managed and bring-your-own-key) begin with. */
const instanceChange = { actor, instance_id: z.string(), tenant_id: z.string(), alias: z.string(), change, status: z.string() };
/** What every ledger event of a hold ends with: the tenant's balance after the movement. */
const balanceAfter = { available_units: units, reserved_units: units };

/** An upstream as audited: never its credential (nor ciphertext), only whether one is set. */
const upstreamState = z.object({
  provider: z.string(),
  base_url: z.string(),
  enabled: z.boolean(),
  key_configured: z.boolean(),
  version: z.number().int(),
});
/** A spend budget's state when it crossed a threshold. */
const budgetEvent = z.object({
  tenant_id: z.string(),
  scope: z.enum(["key", "instance"]),
  scope_id: z.string(),
  period: z.enum(["day", "month"]),
  period_start: z.string(),
  limit_units: units,
  spent_units: units,
});
const modelState = z.object({
  upstream_id: z.string(),
  upstream_model: z.string(),
  enabled: z.boolean(),
  max_output_tokens: z.number().int(),
  /** Absent in events written before the field existed. */
  max_tokens_per_image: z.number().int().nullable().optional(),
  version: z.number().int(),
});
const priceState = z.object({
  price_id: z.string(),
  version: z.number().int(),
  input_units_per_mtok: units,
  output_units_per_mtok: units,
});
const offerState = z.object({
  discount_bps: z.number().int(),
  expires_at: z.string().nullable(),
  version: z.number().int(),
});

/** A conversation hub change: which conversation (the feed row's data is the resource). */
const conversationRef = z.object({ tenant_id: z.string(), conversation_id: z.string() });
const participantRef = z.object({ tenant_id: z.string(), conversation_id: z.string(), participant_id: z.string() });
/** `chat_id`: the chat of a `bot_chat` channel (after the change), else null. */
const channelRef = z.object({ tenant_id: z.string(), conversation_id: z.string(), channel_id: z.string(), chat_id: z.string().nullable() });
/** A bot chat's message: `conversation_id` is the chat's conversation (its message is on that feed too), or null. */
const messageRef = z.object({
  tenant_id: z.string(),
  chat_id: z.string(),
  conversation_id: z.string().nullable(),
  message_id: z.string(),
  author: z.string(),
  kind: z.string(),
});

/**
 * Every domain event: its type (also the tail of its NATS subject) and payload
 * schema. Payloads never carry secrets, prompts or answers. Publishing validates
 * against this catalog, so a consumer can trust what it receives.
 */
export const EVENT_CATALOG = {
  "identity.user_registered": z.object({ user_id: z.string(), tenant_id: z.string() }),
  "identity.session_revoked": z.object({
    session_id: z.string(),
    user_id: z.string(),
    reason: z.enum(["logout", "refresh_reuse"]),
  }),
  "identity.platform_role_changed": z.object({
    user_id: z.string(),
    changed_by: z.string().nullable(),
    from: z.string().nullable(),
    to: z.string().nullable(),
  }),
  "key.created": z.object({ key_id: z.string(), tenant_id: z.string(), name: z.string(), prefix: z.string(), actor: z.string().nullable() }),
  "key.rotated": z.object({ key_id: z.string(), tenant_id: z.string(), prefix: z.string(), actor: z.string().nullable() }),
  "key.revoked": z.object({ key_id: z.string(), tenant_id: z.string(), actor: z.string().nullable() }),
  "key.expired": z.object({ key_id: z.string(), tenant_id: z.string(), expires_at: z.string() }),
  "key.policy_denied": z.object({
    key_id: z.string(),
    tenant_id: z.string(),
    reason: z.enum(["ip_not_allowed", "scope_missing", "service_alias_not_allowed", "daily_quota", "rate_limit", "concurrency"]),
    method: z.string(),
    path: z.string(),
    client_ip: z.string(),
  }),
  /** A key's spend budget was set, changed or removed (null). */
  "key.budget_changed": z.object({
    key_id: z.string(),
    tenant_id: z.string(),
    budget_units: units.nullable(),
    budget_period: z.enum(["day", "month"]).nullable(),
    actor: z.string(),
  }),
  "key.quota_exceeded": z.object({ key_id: z.string(), tenant_id: z.string(), day: z.string(), daily_quota: z.number().int() }),
  /**
   * A key's expires_at is 7 days away (`days_left` 7) or 1 day away (1): once each, sent on to the
   * tenant's account webhooks as `key.expiring` (CONTRACT.md section 13, docs/decisions/0210).
   */
  "key.expiring": z.object({
    key_id: z.string(),
    tenant_id: z.string(),
    prefix: z.string(),
    expires_at: z.string(),
    days_left: z.union([z.literal(7), z.literal(1)]),
  }),
  /** A tenant registered or removed an account webhook (never its secret). */
  "account.webhook_created": z.object({ tenant_id: z.string(), webhook_id: z.string(), events: z.array(z.string()), actor: z.string().nullable() }),
  "account.webhook_deleted": z.object({ tenant_id: z.string(), webhook_id: z.string(), actor: z.string().nullable() }),
  /** A tenant's balance alert threshold (null: none). */
  "account.alerts_changed": z.object({ tenant_id: z.string(), balance_low_units: units.nullable(), actor: z.string().nullable() }),
  /** The available balance fell below the tenant's threshold (once per crossing); sent to its account webhooks as `balance.low`. */
  "account.balance_low": z.object({ tenant_id: z.string(), available_units: units, threshold_units: units }),
  "ledger.credited": z.object({
    tenant_id: z.string(),
    entry_id: z.string(),
    operation_id: z.string(),
    units,
    available_units: units,
    reason: z.string(),
  }),
  "managed_ai.upstream_changed": z.object({
    actor,
    upstream_id: z.string(),
    change,
    /** A new API key was stored (create with a key, or rotation). */
    key_rotated: z.boolean(),
    before: upstreamState.nullable(),
    after: upstreamState,
  }),
  "managed_ai.upstream_tested": z.object({
    actor,
    upstream_id: z.string(),
    reachable: z.boolean(),
    authenticated: z.boolean(),
    upstream_status: z.number().int().nullable(),
  }),
  "managed_ai.model_changed": z.object({
    actor,
    model_alias: z.string(),
    change,
    before: modelState.nullable(),
    after: modelState,
  }),
  "managed_ai.price_published": z.object({
    actor,
    model_alias: z.string(),
    price: priceState,
    previous: priceState.nullable(),
  }),
  "managed_ai.offer_changed": z.object({
    actor,
    offer_id: z.string(),
    tenant_id: z.string(),
    model_alias: z.string(),
    change,
    before: offerState.nullable(),
    after: offerState,
  }),
  /** Units moved from available to held under a new hold (expires_at: ISO 8601). */
  "ledger.reserved": z.object({ ...holdMovement, units, expires_at: z.string(), ...balanceAfter }),
  /** A hold settled: `units` held → revenue, `released_units` held → available. */
  "ledger.captured": z.object({ ...holdMovement, units, released_units: units, ...balanceAfter }),
  /** A hold released whole: `released_units` held → available. */
  "ledger.voided": z.object({ ...holdMovement, released_units: units, ...balanceAfter }),
  /** A charge drawn from an open allotment (docs/decisions/0027): `units` held → revenue; the allotment stays open. */
  "ledger.posted": z.object({ ...holdMovement, units, ...balanceAfter }),
  /** Units of an open allotment given back: `units` held → available; the allotment stays open. */
  "ledger.released": z.object({ ...holdMovement, units, ...balanceAfter }),
  "managed_ai.instance_changed": z.object({ ...instanceChange, default_model: z.string() }),
  /** A managed request's usage record was opened: the reservation is being taken. */
  "managed_ai.request_reserved": z.object({
    request_id: z.string(),
    tenant_id: z.string(),
    key_id: z.string().nullable(),
    service_alias: z.string(),
    model_alias: z.string(),
    price_id: z.string(),
    reserved_units: units,
    stream: z.boolean(),
  }),
  /** A spend budget's final charges reached 80 % of its limit (once per budget and period; docs/decisions/0024). */
  "budget.threshold": budgetEvent,
  /** A spend budget is used up: its final charges reached the limit (once per budget and period). */
  "budget.reached": budgetEvent,
  /** Refused before any reservation (insufficient balance): the record is gone, the key reusable. */
  "managed_ai.request_refused": z.object({ request_id: z.string(), tenant_id: z.string(), key_id: z.string().nullable(), reason: z.string() }),
  /** The record reached completed, failed or review. */
  "managed_ai.request_settled": z.object({
    request_id: z.string(),
    tenant_id: z.string(),
    key_id: z.string().nullable(),
    status: z.enum(["completed", "failed", "review"]),
    reserved_units: units,
    final_units: units.nullable(),
    error_code: z.string().nullable(),
  }),
  /** An operator released a review or expired reservation. */
  "managed_ai.request_released": z.object({
    actor,
    request_id: z.string(),
    tenant_id: z.string(),
    key_id: z.string().nullable(),
    reason: z.string(),
    refunded_units: units,
  }),
  /** An operator captured part or all of a review or expired reservation (docs/decisions/0177): charged `final_units`, the rest refunded. */
  "managed_ai.request_captured": z.object({
    actor,
    request_id: z.string(),
    tenant_id: z.string(),
    key_id: z.string().nullable(),
    reason: z.string(),
    final_units: units,
    refunded_units: units,
  }),
  /** A streamed upload completed and its file became downloadable (never the token or the filename). */
  "file.uploaded": z.object({
    file_id: z.string(),
    tenant_id: z.string(),
    size: z.string().regex(/^\d+$/),
    sha256: z.string(),
    expires_at: z.string().nullable(),
    max_downloads: z.number().int().nullable(),
  }),
  /** A download was counted (its bytes are being sent). */
  "file.downloaded": z.object({ file_id: z.string(), tenant_id: z.string(), downloads: z.number().int(), max_downloads: z.number().int().nullable() }),
  /** The sweeper removed a file's bytes: it expired, or its downloads were used up. */
  "file.removed": z.object({ file_id: z.string(), tenant_id: z.string(), reason: z.enum(["expired", "exhausted"]) }),
  /**
   * A record moved on after its first settlement: the reconciler finished one whose outcome was
   * unknown, from what the ledger knows (docs/decisions/0150), or a `completed` record whose
   * capture failed went to review (`settlement_failed`; docs/decisions/0164).
   */
  "managed_ai.request_reconciled": z.object({
    request_id: z.string(),
    tenant_id: z.string(),
    key_id: z.string().nullable(),
    from_status: z.string(),
    from_error_code: z.string().nullable(),
    status: z.enum(["completed", "failed", "review"]),
    error_code: z.string().nullable(),
    reserved_units: units,
    final_units: units.nullable(),
    refunded_units: units.nullable(),
  }),
  // Push and SocialOps (messaging). Never a secret, a message text or a URL's token.
  "messaging.instance_changed": z.object({
    actor: z.string().nullable(),
    instance_id: z.string(),
    tenant_id: z.string(),
    service_id: z.enum(["webhook-push", "socialops"]),
    alias: z.string(),
    change,
    status: z.string(),
    version: z.number().int(),
  }),
  /** A push message was recorded; its reservation (price × enabled targets) is being taken. */
  "push.message_accepted": z.object({
    message_id: z.string(),
    tenant_id: z.string(),
    instance_id: z.string(),
    key_id: z.string().nullable(),
    targets: z.number().int(),
    reserved_units: units,
  }),
  /** Refused before anything was sent; the record is gone. */
  "push.message_refused": z.object({ message_id: z.string(), tenant_id: z.string(), reason: z.string() }),
  "push.message_reserved": z.object({ message_id: z.string(), tenant_id: z.string(), hold_id: z.string(), reserved_units: units }),
  /** One target's outcome (`interrupted`: a crash lost it; not charged). */
  "push.target_attempted": z.object({
    message_id: z.string(),
    tenant_id: z.string(),
    target_id: z.string(),
    ok: z.boolean(),
    status: z.number().int().nullable(),
    error: z.string().nullable(),
  }),
  "push.message_settled": z.object({
    message_id: z.string(),
    tenant_id: z.string(),
    instance_id: z.string(),
    status: z.enum(["delivered", "partial", "failed"]),
    targets: z.number().int(),
    delivered: z.number().int(),
    charged_units: units,
    recovered: z.boolean(),
  }),
  /** An inbound SocialOps event stored (once per event_id). */
  "socialops.message_received": z.object({
    tenant_id: z.string(),
    instance_id: z.string(),
    provider: z.string(),
    event_id: z.string(),
    thread_id: z.string(),
    message_id: z.string(),
  }),
  /** A reply was queued; the messaging reply worker delivers it (durable consumer). */
  "socialops.reply_queued": z.object({
    tenant_id: z.string(),
    instance_id: z.string(),
    thread_id: z.string(),
    message_id: z.string(),
  }),
  /** A delivery attempt of a reply: `state` delivered, retrying or failed (no more attempts). */
  "socialops.reply_attempted": z.object({
    tenant_id: z.string(),
    thread_id: z.string(),
    message_id: z.string(),
    attempt: z.number().int(),
    state: z.enum(["delivered", "retrying", "failed"]),
    status: z.number().int().nullable(),
    error: z.string().nullable(),
  }),
  /** A bring-your-own-key instance was created or changed (never its key; whether one is stored inline). */
  "managed_ai.byok_instance_changed": z.object({
    ...instanceChange,
    provider: z.string(),
    base_url: z.string(),
    default_model: z.string(),
    credential: z.enum(["inline", "connected_account"]),
    connected_account_id: z.string().nullable(),
  }),
  /** A tenant's connected account was stored or deleted (never its secret). */
  "managed_ai.connected_account_changed": z.object({
    actor,
    account_id: z.string(),
    tenant_id: z.string(),
    provider: z.string(),
    change: z.enum(["created", "deleted"]),
  }),
  // Bot, widget and conversation hub (messaging). Ids only: never message text, tokens or secrets.
  "bot.created": z.object({ bot_id: z.string(), tenant_id: z.string() }),
  // The kinds of the widget feed and the conversation feed (CONTRACT.md 11, docs/decisions/0124):
  // each change is this one event, and the feeds are its projection (docs/decisions/0225). The
  // event says which (ids); the feed row's `data` is the resource after the change, written in
  // the same transaction and never published. `chat_id` and `conversation_id` are the row's.
  "chat.created": z.object({ tenant_id: z.string(), chat_id: z.string(), conversation_id: z.string().nullable() }),
  "session.created": z.object({ tenant_id: z.string(), session_id: z.string(), chat_id: z.string(), conversation_id: z.string().nullable() }),
  /** A widget session's refresh token was rotated (not on the feed). */
  "session.refreshed": z.object({ tenant_id: z.string(), session_id: z.string(), chat_id: z.string(), conversation_id: z.string().nullable() }),
  /** Ended: revoked, its refresh token used twice, or its chat ended (on the feed as the chat's `end` action, not as this). */
  "session.revoked": z.object({
    tenant_id: z.string(),
    session_id: z.string(),
    chat_id: z.string(),
    conversation_id: z.string().nullable(),
    reason: z.enum(["revoked", "refresh_reuse", "chat_ended"]),
  }),
  "conversation.created": conversationRef,
  "conversation.updated": conversationRef,
  "participant.added": participantRef,
  "participant.updated": participantRef,
  "participant.removed": participantRef,
  "channel.added": channelRef,
  "channel.updated": channelRef,
  "channel.removed": channelRef,
  /** A widget session was opened in a conversation (its chat a channel, its visitor a participant). */
  "widget_session.created": z.object({ tenant_id: z.string(), conversation_id: z.string(), session_id: z.string(), chat_id: z.string() }),
  "message.created": messageRef,
  "message.updated": messageRef,
  "message.deleted": messageRef,
  "chat.action": z.object({
    tenant_id: z.string(),
    chat_id: z.string(),
    conversation_id: z.string().nullable(),
    action: z.string(),
    author: z.string(),
  }),
  // Retired (issue 39): the feed's kinds above replaced them. No longer emitted; kept so that
  // events already in the stream are still read.
  "bot.message_changed": z.object({
    tenant_id: z.string(),
    chat_id: z.string(),
    message_id: z.string(),
    change: z.enum(["created", "edited", "deleted"]),
    author: z.string(),
    kind: z.string(),
  }),
  "bot.chat_action": z.object({ tenant_id: z.string(), chat_id: z.string(), action: z.string(), author: z.string() }),
  "bot.widget_session_changed": z.object({
    tenant_id: z.string(),
    session_id: z.string(),
    chat_id: z.string(),
    change: z.enum(["created", "refreshed", "revoked"]),
    reason: z.enum(["revoked", "refresh_reuse", "chat_ended"]).nullable(),
  }),
  "conversation.changed": z.object({
    tenant_id: z.string(),
    conversation_id: z.string(),
    change: z.enum(["created", "updated", "participant_added", "participant_updated", "participant_removed", "channel_added"]),
    participant_id: z.string().nullable(),
    channel_id: z.string().nullable(),
  }),
  "conversation.webhook_changed": z.object({
    tenant_id: z.string(),
    webhook_id: z.string(),
    change: z.enum(["registered", "revoked", "replayed"]),
    queued: z.number().int(),
  }),
  "conversation.webhook_attempted": z.object({
    tenant_id: z.string(),
    webhook_id: z.string(),
    delivery_id: z.string(),
    event_id: z.string(),
    attempt: z.number().int(),
    status: z.number().int().nullable(),
    state: z.enum(["pending", "delivered", "exhausted"]),
  }),
  /** A job was created (`from` null) or moved to another status; drives the job runner (jobs service). */
  "job.status_changed": z.object({
    job_id: z.string(),
    tenant_id: z.string(),
    type: z.string(),
    from: z.enum(["pending", "running", "succeeded", "failed", "canceled", "expired"]).nullable(),
    to: z.enum(["pending", "running", "succeeded", "failed", "canceled", "expired"]),
    error_code: z.string().nullable(),
  }),
  /** A live energy lease was ordered from the rental provider. */
  "tron.lease_ordered": z.object({
    lease_id: z.string(),
    job_id: z.string(),
    tenant_id: z.string(),
    provider_order_id: z.string(),
    receiver: z.string(),
    energy: z.number().int(),
  }),
} as const;

export type EventType = keyof typeof EVENT_CATALOG;
export type EventData<T extends EventType> = z.infer<(typeof EVENT_CATALOG)[T]>;

export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[];

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_CATALOG, value);
}

/**
 * The events a metered request causes on its way, one or two of each a request: a usage
 * record's reservation and settlement, the ledger's hold movements. Kept at their source
 * (`KEPT_AT_SOURCE`) and published in batches (`PUBLISHED_IN_BATCHES`), each for its own reason.
 */
const REQUEST_BOOKKEEPING: readonly EventType[] = [
  "managed_ai.request_reserved",
  "managed_ai.request_settled",
  "ledger.reserved",
  "ledger.captured",
  "ledger.voided",
  "ledger.posted",
  "ledger.released",
];

/**
 * The bookkeeping events of metered requests that their producer keeps as rows, each under
 * its own id and with the payload it was published with, for as long as the request can be
 * viewed, and answers by request (docs/decisions/0330): a usage record's reservation and
 * settlement (managed-ai's `ListRequestEvents`, from the record itself) and the ledger's hold
 * movements (`ListEvents`, from its journal, which keeps every transfer). They are published
 * like every event; the audit trail stores no copy of them, and the request view reads them
 * from their source. An operator's or a customer's act (a credit, a key's change, a release)
 * is stored in the audit trail as before.
 */
export const KEPT_AT_SOURCE: ReadonlySet<EventType> = new Set<EventType>(REQUEST_BOOKKEEPING);

/**
 * The events a metered request causes on its way (a usage record's reservation and
 * settlement, the ledger's hold movements): several a request, at the request rate. Their
 * relays publish a run of them as one JetStream message, a batch (docs/decisions/0331): a
 * JSON array of envelopes on `<ns>.events.<prefix>.batch` (`Subjects.batch`), so the
 * broker stores, acknowledges and delivers one message per run instead of one per event.
 * Consumers unpack batches (`@gateway/events-runtime`'s `messageEnvelopes`); a consumer
 * of one of these types alone reads its prefix's batch subject. A batch re-published with
 * other events than its first copy is not caught by JetStream's duplicate window: these
 * events reach consumers at least once, and consumers dedupe by event id where it matters.
 */
export const PUBLISHED_IN_BATCHES: ReadonlySet<EventType> = new Set<EventType>(REQUEST_BOOKKEEPING);

/** What travels on NATS: the payload plus who, when, and which request caused it. */
export type EventEnvelope<T extends EventType = EventType> = {
  id: string;
  type: T;
  source: string;
  occurred_at: string;
  request_id: string | null;
  data: EventData<T>;
};

const envelopeSchema = z.object({
  id: z.string().min(1),
  type: z.string(),
  source: z.string(),
  occurred_at: z.string(),
  request_id: z.string().nullable(),
  data: z.unknown(),
});

export class InvalidEventError extends Error {
  override readonly name = "InvalidEventError";
}

export function parseEnvelope(raw: unknown): EventEnvelope {
  const envelope = envelopeSchema.safeParse(raw);
  if (!envelope.success) throw new InvalidEventError(`malformed envelope: ${envelope.error.issues[0]?.message ?? "?"}`);
  const { type } = envelope.data;
  if (!isEventType(type)) throw new InvalidEventError(`unknown event type ${type}`);
  const data = EVENT_CATALOG[type].safeParse(envelope.data.data);
  if (!data.success) throw new InvalidEventError(`invalid ${type} payload: ${data.error.issues[0]?.message ?? "?"}`);
  return { ...envelope.data, type, data: data.data } as EventEnvelope;
}

/**
 * The envelope's shape only (plain type checks, no schema run): for consumers that
 * store what was published without reading the payload (the audit trail). Every
 * producer validated the payload against the catalog before publishing (`validateData`
 * in `outboxRow`; the ledger's log is written by its own SQL
 * functions), so running the catalog again on each delivery checks nothing new.
 * An unknown type or a payload that is not an object is still malformed.
 */
export function parseEnvelopeShape(raw: unknown): EventEnvelope {
  const e = raw as Record<string, unknown> | null;
  if (typeof e !== "object" || e === null) throw new InvalidEventError("malformed envelope: not an object");
  if (typeof e.id !== "string" || e.id.length === 0) throw new InvalidEventError("malformed envelope: id");
  if (typeof e.type !== "string" || !isEventType(e.type)) throw new InvalidEventError(`unknown event type ${String(e.type)}`);
  if (typeof e.source !== "string" || typeof e.occurred_at !== "string") throw new InvalidEventError("malformed envelope: source or occurred_at");
  if (e.request_id !== null && typeof e.request_id !== "string") throw new InvalidEventError("malformed envelope: request_id");
  if (typeof e.data !== "object" || e.data === null || Array.isArray(e.data)) throw new InvalidEventError(`invalid ${e.type} payload: not an object`);
  return { id: e.id, type: e.type, source: e.source, occurred_at: e.occurred_at, request_id: e.request_id, data: e.data } as EventEnvelope;
}

export function validateData<T extends EventType>(type: T, data: EventData<T>): EventData<T> {
  const parsed = EVENT_CATALOG[type].safeParse(data);
  if (!parsed.success)
    throw new InvalidEventError(`invalid ${type} payload: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data as EventData<T>;
}
