import type { Implementation } from "@gateway/grpc-kit";
import type { messaging, messagingV1 } from "@gateway/protos";
import type { AppContext } from "../domain/app-context.js";
import type { AppInstance, SocialMessage, SocialThread } from "../generated/prisma/client.js";
import { redactedConfig } from "../domain/instances/config.js";
import { listAppInstances } from "../domain/instances/list.js";
import { putAppInstance } from "../domain/instances/put.js";
import { listPushMessages, type PushMessageWithDeliveries } from "../domain/push/list.js";
import { sendPush } from "../domain/push/send.js";
import { ingestSocialEvent } from "../domain/socialops/ingest.js";
import { listSocialMessages, listSocialThreads } from "../domain/socialops/list.js";
import { queueSocialReply } from "../domain/socialops/reply.js";
import { AppError } from "@gateway/errors";

type AppMethods =
  | "PutAppInstance"
  | "ListAppInstances"
  | "SendPush"
  | "ListPushMessages"
  | "IngestSocialEvent"
  | "ListSocialThreads"
  | "ListSocialMessages"
  | "QueueSocialReply";

/** Proto3 `optional` fields from nullable columns: a null is left out (absent on the wire), any other value is sent. */
function present<T extends Record<string, unknown>>(fields: T): { [K in keyof T]?: Exclude<T[K], null> } {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null)) as { [K in keyof T]?: Exclude<T[K], null> };
}

function encodeInstance(i: AppInstance): messaging.AppInstance {
  return {
    id: i.id,
    tenant_id: i.tenantId,
    service_id: i.serviceId,
    alias: i.alias,
    status: i.status,
    config_json: JSON.stringify(redactedConfig(i.serviceId, i.config)),
    version: i.version,
    created_at: i.createdAt.toISOString(),
    updated_at: i.updatedAt.toISOString(),
  };
}

function encodeThread(t: SocialThread): messaging.SocialThread {
  return {
    id: t.id,
    provider: t.provider,
    external_thread_id: t.externalThreadId,
    subject: t.subject,
    unread_count: t.unreadCount,
    message_count: t.messageCount,
    last_activity_at: t.lastActivityAt.toISOString(),
    created_at: t.createdAt.toISOString(),
  };
}

function encodeMessage(m: SocialMessage): messaging.SocialMessage {
  return {
    id: m.id,
    thread_id: m.threadId,
    direction: m.direction,
    text: m.text,
    created_at: m.createdAt.toISOString(),
    delivery_attempts: m.deliveryAttempts,
    ...present({
      event_id: m.eventId,
      author: m.author,
      delivery_state: m.deliveryState,
      delivery_last_status: m.deliveryLastStatus,
      delivery_error: m.deliveryError,
      delivered_at: m.deliveredAt?.toISOString() ?? null,
    }),
  };
}

function encodePushMessage(m: PushMessageWithDeliveries): messaging.PushMessageRecord {
  return {
    id: m.id,
    status: m.status,
    charged_units: (m.chargedUnits ?? 0n).toString(),
    created_at: m.createdAt.toISOString(),
    ...present({ settled_at: m.settledAt?.toISOString() ?? null }),
    deliveries: m.deliveries.map((d) => ({
      target_id: d.targetId,
      type: d.type,
      ...present({ ok: d.ok, status: d.status, error: d.error, finished_at: d.finishedAt?.toISOString() ?? null }),
    })),
  };
}

function parseConfig(json: string): unknown {
  try {
    return json ? (JSON.parse(json) as unknown) : {};
  } catch {
    throw new AppError("invalid_request", "config must be a JSON object.");
  }
}

/** Push and SocialOps transport: decode, call the domain, encode. */
export function appHandlers(ctx: AppContext): Pick<Implementation<typeof messagingV1>, AppMethods> {
  return {
    async PutAppInstance(req, call) {
      const input = {
        actor: call.actor ?? null,
        tenant_id: req.tenant_id,
        service_id: req.service_id as never,
        alias: req.alias,
        status: req.status as never,
        config: parseConfig(req.config_json),
      };
      return encodeInstance(await putAppInstance({ ctx, input }));
    },
    async ListAppInstances(req) {
      return { instances: (await listAppInstances({ ctx, input: req })).map(encodeInstance) };
    },
    async SendPush(req) {
      const sent = await sendPush({
        ctx,
        input: {
          tenant_id: req.tenant_id,
          api_key_id: req.api_key_id || null,
          alias: req.alias,
          title: req.title,
          text: req.text,
          key_budget_units: req.key_budget_units,
          key_budget_period: req.key_budget_period,
        },
      });
      return {
        message_id: sent.messageId,
        status: sent.status,
        charged_units: sent.chargedUnits.toString(),
        results: sent.results.map((r) => ({
          target_id: r.target_id,
          ok: r.ok,
          ...present({ status: r.status, error: r.error }),
        })),
      };
    },
    async ListPushMessages(req) {
      return { messages: (await listPushMessages({ ctx, input: req })).map(encodePushMessage) };
    },
    async IngestSocialEvent(req) {
      const input = { ...req, author: req.author ?? null };
      const res = await ingestSocialEvent({ ctx, input });
      return { thread_id: res.threadId, message_id: res.messageId, duplicate: res.duplicate };
    },
    async ListSocialThreads(req) {
      const page = await listSocialThreads({ ctx, input: req });
      return { threads: page.items.map(encodeThread), next_cursor: page.nextCursor };
    },
    async ListSocialMessages(req) {
      const page = await listSocialMessages({ ctx, input: req });
      return { messages: page.items.map(encodeMessage), next_cursor: page.nextCursor };
    },
    async QueueSocialReply(req) {
      return encodeMessage(await queueSocialReply({ ctx, input: { tenant_id: req.tenant_id, alias: req.alias, thread_id: req.thread_id, text: req.text } }));
    },
  };
}
