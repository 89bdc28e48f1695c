import { serveCarried, type CallContext, type GrpcServer, type Implementation } from "@gateway/grpc-kit";
import { reclaimAllotments } from "../domain/allotments/reclaim.js";
import { managedAiV1, type managedAi } from "@gateway/protos";
import type { ManagedAiContext } from "../domain/context.js";
import { listCustomerModels } from "../domain/customer-models/list.js";
import { listModels } from "../domain/models/list.js";
import { putModel } from "../domain/models/put.js";
import { listOffers } from "../domain/offers/list.js";
import { putOffer } from "../domain/offers/put.js";
import { listPrices } from "../domain/prices/list.js";
import { publishPrice } from "../domain/prices/publish.js";
import { listUpstreams } from "../domain/upstreams/list.js";
import { putUpstream } from "../domain/upstreams/put.js";
import { testUpstream } from "../domain/upstreams/test.js";
import { listInstanceModels, listInstances } from "../domain/instances/list.js";
import { putInstance } from "../domain/instances/put.js";
import { invokeChat, type InvokeResult } from "../domain/invocation/invoke.js";
import { invokeEmbeddings } from "../domain/invocation/embed.js";
import { createConnectedAccount } from "../domain/connected-accounts/create.js";
import { deleteConnectedAccount } from "../domain/connected-accounts/delete.js";
import { listConnectedAccounts } from "../domain/connected-accounts/list.js";
import { revealConnectedAccount } from "../domain/connected-accounts/reveal.js";
import { invokeChatStream, type StreamMessage } from "../domain/invocation/invoke-stream.js";
import { invokeMessages, invokeMessagesStream, type MessagesStreamMessage } from "../domain/invocation/messages/invoke.js";
import { countMessageTokens } from "../domain/invocation/messages/count-tokens.js";
import { getUsage, listRequestEvents, listUsage } from "../domain/usage/list.js";
import { releaseUsage } from "../domain/usage/release.js";
import { captureUsage } from "../domain/usage/capture.js";
import { InFlight } from "./in-flight.js";
import { getBudgets, keyBudgetOf, reserveBudgetsFor, settleBudgetsFor } from "../domain/budgets/get.js";
import {
  encodeBudget,
  encodeConnectedAccount,
  encodeCustomerModel,
  encodeInstance,
  encodeModel,
  encodeOffer,
  encodePrice,
  encodeUpstream,
  encodeUsage,
} from "./encode.js";

/**
 * Transport only: decode, call the domain (writes with the caller as actor), encode.
 * Invocations are counted in `inFlight`: they may outlive their call (a client that
 * left does not stop the metering), and shutdown waits for them.
 */
export function managedAiHandlers(ctx: ManagedAiContext, inFlight = new InFlight(), server?: GrpcServer): Implementation<typeof managedAiV1> {
  /** A metered call, counted by the operations metrics when they are kept (docs/decisions/0211). */
  const metered = <T>(run: () => Promise<T>): Promise<T> => (ctx.metrics ? ctx.metrics.track(run) : run());
  const handlers: Implementation<typeof managedAiV1> = {
    async ListModels(req) {
      return { models: (await listModels({ ctx, input: req })).map(encodeModel) };
    },
    async PutModel(req, call) {
      // On the wire 0 clears the per-image limit (proto3 has no null).
      const perImage = req.max_tokens_per_image === 0 ? { max_tokens_per_image: null } : {};
      return encodeModel(await putModel({ ctx, input: { ...req, ...perImage, actor: call.actor } }));
    },
    async PublishPrice(req, call) {
      return encodeModel(await publishPrice({ ctx, input: { ...req, actor: call.actor } }));
    },
    async ListPrices(req) {
      return { prices: (await listPrices({ ctx, input: req })).map(encodePrice) };
    },
    async ListUpstreams(req) {
      return { upstreams: (await listUpstreams({ ctx, input: req })).map(encodeUpstream) };
    },
    async PutUpstream(req, call) {
      const result = await putUpstream({ ctx, input: { ...req, actor: call.actor } });
      return { id: result.id, version: result.version, key_configured: result.keyConfigured };
    },
    async TestUpstream(req, call) {
      const result = await testUpstream({ ctx, input: { id: req.id, actor: call.actor, ...(call.deadline ? { deadline: call.deadline } : {}) } });
      return {
        reachable: result.reachable,
        authenticated: result.authenticated,
        ...(result.upstreamStatus === null ? {} : { upstream_status: result.upstreamStatus }),
      };
    },
    async ListOffers(req) {
      return { offers: (await listOffers({ ctx, input: req })).map(encodeOffer) };
    },
    async PutOffer(req, call) {
      const result = await putOffer({ ctx, input: { ...req, actor: call.actor } });
      return { id: result.id, version: result.version };
    },
    async ListCustomerModels(req) {
      return { models: (await listCustomerModels({ ctx, input: req })).map(encodeCustomerModel) };
    },
    async PutInstance(req, call) {
      const common = {
        actor: call.actor,
        tenant_id: req.tenant_id,
        alias: req.alias,
        status: req.status as "active",
        default_model: req.default_model,
        ...(req.max_tokens_per_request !== undefined ? { max_tokens_per_request: req.max_tokens_per_request } : {}),
        ...(req.max_cost_per_request !== undefined ? { max_cost_per_request: req.max_cost_per_request } : {}),
        budget_units: req.budget_units,
        budget_period: req.budget_period as "day",
      };
      const input =
        req.mode === "byok"
          ? {
              ...common,
              mode: "byok" as const,
              provider: req.provider,
              base_url: req.base_url,
              ...(req.api_key !== undefined ? { api_key: req.api_key } : {}),
              ...(req.connected_account_id ? { connected_account_id: req.connected_account_id } : {}),
              ...(req.pricing ? { pricing: req.pricing } : {}),
            }
          : { ...common, mode: req.mode as "managed", models: req.models };
      return encodeInstance(await putInstance({ ctx, input }));
    },
    async GetBudgets(req) {
      return { budgets: (await getBudgets({ ctx, input: req })).map(encodeBudget) };
    },
    async ReserveBudgets(req) {
      await reserveBudgetsFor({ ctx, input: req });
      return {};
    },
    async SettleBudgets(req) {
      return { settled: await settleBudgetsFor({ ctx, input: req }) };
    },
    async ReclaimAllotments(req) {
      return { outcome: await reclaimAllotments({ ctx, input: req }) };
    },
    async ListInstances(req) {
      return { instances: (await listInstances({ ctx, input: req })).map(encodeInstance) };
    },
    async ListInstanceModels(req, call) {
      const listed = await listInstanceModels({ ctx, input: req, signal: call.signal });
      return {
        models: listed.models.map((m) => ({ alias: m.alias, created_at: m.createdAt.toISOString() })),
        ...(listed.providerBody ? { provider_body: listed.providerBody } : {}),
      };
    },
    async Invoke(req, call) {
      return invokeResponse(await metered(() => inFlight.track(invokeChat({ ctx, input: invokeInput(req, call) }))));
    },
    async Embed(req, call) {
      return invokeResponse(await metered(() => inFlight.track(invokeEmbeddings({ ctx, input: invokeInput(req, call) }))));
    },
    async CreateConnectedAccount(req, call) {
      return encodeConnectedAccount(await createConnectedAccount({ ctx, input: { ...req, actor: call.actor } }));
    },
    async ListConnectedAccounts(req) {
      return { accounts: (await listConnectedAccounts({ ctx, input: req })).map(encodeConnectedAccount) };
    },
    async DeleteConnectedAccount(req, call) {
      await deleteConnectedAccount({ ctx, input: { ...req, actor: call.actor } });
      return {};
    },
    async RevealConnectedAccount(req) {
      return revealConnectedAccount({ ctx, input: req });
    },
    async InvokeStream(req, call, send) {
      await metered(() =>
        inFlight.track(
          invokeChatStream({ ctx, input: invokeInput(req, call), send: (message) => send(streamMessage(message)), batches: req.stream_batches === true }),
        ),
      );
    },
    async InvokeMessages(req, call) {
      return invokeResponse(await metered(() => inFlight.track(invokeMessages({ ctx, input: invokeInput(req, call) }))));
    },
    async InvokeMessagesStream(req, call, send) {
      await metered(() => inFlight.track(invokeMessagesStream({ ctx, input: invokeInput(req, call), send: (message) => send(streamMessage(message)) })));
    },
    async CountMessageTokens(req) {
      const tokens = await countMessageTokens({ ctx, input: { tenantId: req.tenant_id, alias: req.alias, body: req.body } });
      return { input_tokens: tokens.toString() };
    },
    async ListUsage(req) {
      const page = await listUsage({ ctx, input: { ...req, mode: req.mode as "managed" } });
      return { records: page.items.map(encodeUsage), next_cursor: page.nextCursor };
    },
    async GetUsage(req) {
      return encodeUsage(await getUsage({ ctx, input: req }));
    },
    async ListRequestEvents(req) {
      const rows = await listRequestEvents({ ctx, input: req });
      return {
        events: rows.map((e) => ({
          event_id: e.id,
          type: e.type,
          source: "managed-ai",
          request_id: req.request_id,
          occurred_at: e.createdAt.toISOString(),
          data_json: e.dataJson,
        })),
      };
    },
    async ReleaseUsage(req, call) {
      const result = await releaseUsage({ ctx, input: { id: req.id, reason: req.reason, actor: call.actor ?? "" } });
      return { id: result.id, status: result.status, refunded_units: result.refunded.toString() };
    },
    async CaptureUsage(req, call) {
      const result = await captureUsage({ ctx, input: { id: req.id, units: req.units, reason: req.reason, actor: call.actor ?? "" } });
      return { id: result.id, status: result.status, final_units: result.finalUnits.toString(), refunded_units: result.refunded.toString() };
    },
    /** The invocations above, carried on one long-lived stream per edge process (docs/decisions/0246). */
    Invocations(stream) {
      if (!server) {
        stream.emit("error", { code: 12, details: "Invocations needs the server" });
        return;
      }
      serveCarried<managedAi.InvokeRequest__Output, managedAi.InvokeResponse, managedAi.InvokeStreamMessage>(
        server,
        `/${managedAiV1.serviceName}`,
        {
          unary: { Invoke: handlers.Invoke, InvokeMessages: handlers.InvokeMessages, Embed: handlers.Embed },
          streaming: { InvokeStream: handlers.InvokeStream, InvokeMessagesStream: handlers.InvokeMessagesStream },
        },
        stream as unknown as Parameters<typeof serveCarried<managedAi.InvokeRequest__Output, managedAi.InvokeResponse, managedAi.InvokeStreamMessage>>[3],
      );
    },
  };
  return handlers;
}

function streamMessage(message: StreamMessage | MessagesStreamMessage): managedAi.InvokeStreamMessage {
  if ("start" in message) return { start: { price_id: message.start.priceId, reserved_units: message.start.reservedUnits.toString() } };
  if ("data" in message) return "event" in message ? { data: message.data, event: message.event } : { data: message.data };
  if ("batch" in message) return { batch: { data: message.batch } };
  return { failure: { error_code: message.failure.errorCode, message: message.failure.message } };
}

function invokeResponse(result: InvokeResult) {
  return {
    pricing: { price_id: result.priceId, reserved_units: result.reservedUnits.toString() },
    ...(result.finalUnits !== undefined ? { final_units: result.finalUnits.toString() } : {}),
    ...(result.totalTokens !== undefined ? { total_tokens: result.totalTokens } : {}),
    body: result.body,
  };
}

function invokeInput(req: managedAi.InvokeRequest__Output, call: CallContext) {
  return {
    keyBudget: keyBudgetOf(req),
    requestId: call.requestId,
    tenantId: req.tenant_id,
    apiKeyId: req.api_key_id || null,
    alias: req.alias,
    body: req.body,
    idempotencyKey: req.idempotency_key || null,
    signal: call.signal,
    deadline: call.deadline,
  };
}
