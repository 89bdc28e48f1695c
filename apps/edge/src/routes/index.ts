import type { EdgeDeps } from "../deps.js";
import type { AnyRoute } from "../http/route.js";
import { login, logout, refresh } from "./auth/sessions.js";
import { register } from "./auth/register.js";
import { getAlerts, putAlerts } from "./console/alerts.js";
import { getBalance } from "./console/balance.js";
import { deleteKey, getKeys, patchKey, postKey, postKeyRotate } from "./console/keys.js";
import { listManagedAiUsage } from "./console/managed-ai-usage.js";
import { getMe } from "./console/me.js";
import { getServices, postService } from "./console/services/services.js";
import { getRequest } from "./console/requests.js";
import { listManagedAiModels } from "./console/managed-ai-models.js";
import {
  deleteWebhook as deleteAccountWebhook,
  getWebhookDeliveries as getAccountWebhookDeliveries,
  getWebhooks as getAccountWebhooks,
  postWebhook as postAccountWebhook,
  postWebhookTest as postAccountWebhookTest,
} from "./console/webhooks.js";
import { listDiscounts, putDiscount } from "./ops/ai/discounts.js";
import { listModels, putModel } from "./ops/ai/models.js";
import { listPrices, publishPrice } from "./ops/ai/prices.js";
import { listUpstreams, putUpstream, testUpstream } from "./ops/ai/upstreams.js";
import { captureRequest, listRequests, releaseRequest } from "./ops/ai/requests.js";
import { getTenantBalance } from "./ops/ledger/balance.js";
import { postCredit } from "./ops/ledger/credit.js";
import { putPlatformRole } from "./ops/users/platform-role.js";
import { health, liveness } from "./system/health.js";
import { metrics } from "./system/metrics.js";
import { openapi } from "./system/openapi.js";
import { postChatCompletions } from "./v1/ai/chat-completions.js";
import { getModels } from "./v1/ai/models.js";
import { getJobById, getJobs } from "./v1/jobs.js";
import { getKeySelf } from "./v1/key.js";
import { getSocialOpsProviders } from "./v1/socialops/providers.js";
import { postFileUpload, putFileUpload } from "./v1/files/upload.js";
import { getFileDownload } from "./v1/files/download.js";
import { getFileShare } from "./v1/files/share.js";
import { getFileList } from "./v1/files/list.js";
import { getFilesQuota } from "./console/files-quota.js";
import { getTenantFilesQuota, putTenantFilesQuota } from "./ops/files/quota.js";
import { postPushSend } from "./v1/push/send.js";
import { listPushMessages } from "./console/push/push-messages.js";
import { getSocialOpsInbox, getSocialOpsMessages, getSocialOpsThreads, postSocialOpsReply, postSocialOpsWebhook } from "./v1/socialops/socialops.js";
import { deleteConnectedAccount, getConnectedAccounts, postConnectedAccount } from "./console/connected-accounts.js";
import { postEmbeddings } from "./v1/ai/embeddings.js";
import { postCountTokens, postMessages } from "./v1/ai/messages.js";
import { postNativeChat, postNativeChatStream, postNativeEmbeddings } from "./v1/ai/native.js";
import { getUsers } from "./ops/users/list-users.js";
import { postBot } from "./v1/bot/bots.js";
import { getChats, postChatAction } from "./v1/bot/chats.js";
import { deleteMessage, getChatMessages, patchMessage, postFileMessage, postReply } from "./v1/bot/messages.js";
import { postWidgetAuth, postWidgetRefresh, postWidgetRevoke, postWidgetToken } from "./v1/bot/widget.js";
import { getWidgetEvents, getWidgetMessages, postWidgetMessage } from "./v1/bot/widget-feed.js";
import { deleteChannel, patchChannel, postChannel } from "./v1/conversations/channels.js";
import { getConversation, getConversationEvents, getInbox, patchConversation, postConversation } from "./v1/conversations/conversations.js";
import { deleteParticipant, patchParticipant, postParticipant } from "./v1/conversations/participants.js";
import { deleteWebhook, getWebhookDeliveries, getWebhooks, postWebhook, postWebhookReplay } from "./v1/conversations/webhooks.js";
import { getWidgetSessions, postWidgetSession } from "./v1/conversations/widget-sessions.js";
import { getTronLease, getTronLeases, postTronLease, postTronQuote } from "./v1/tron/tron.js";

/** Every route of the gateway; the OpenAPI document is built from this list. */
export const routes: AnyRoute<EdgeDeps>[] = [
  health,
  liveness,
  openapi,
  metrics,
  register,
  login,
  refresh,
  logout,
  putPlatformRole,
  postCredit,
  getTenantBalance,
  listUpstreams,
  putUpstream,
  testUpstream,
  listModels,
  putModel,
  publishPrice,
  listPrices,
  listDiscounts,
  putDiscount,
  getMe,
  getBalance,
  postKey,
  getKeys,
  postKeyRotate,
  patchKey,
  deleteKey,
  getRequest,
  postAccountWebhook,
  getAccountWebhooks,
  deleteAccountWebhook,
  postAccountWebhookTest,
  getAccountWebhookDeliveries,
  getAlerts,
  putAlerts,
  getKeySelf,
  getJobs,
  getJobById,
  getSocialOpsProviders,
  listManagedAiModels,
  postService,
  getServices,
  listManagedAiUsage,
  listRequests,
  releaseRequest,
  captureRequest,
  postChatCompletions,
  getModels,
  putFileUpload,
  postFileUpload,
  getFileList,
  getFileDownload,
  getFileShare,
  getFilesQuota,
  getTenantFilesQuota,
  putTenantFilesQuota,
  postPushSend,
  listPushMessages,
  postSocialOpsWebhook,
  getSocialOpsInbox,
  getSocialOpsThreads,
  getSocialOpsMessages,
  postSocialOpsReply,
  postConnectedAccount,
  getConnectedAccounts,
  deleteConnectedAccount,
  postNativeChat,
  postNativeChatStream,
  postNativeEmbeddings,
  postEmbeddings,
  postMessages,
  postCountTokens,
  getUsers,
  // Bot, widget and conversation hub (static conversation paths before /v1/conversations/:id).
  postBot,
  getChats,
  getChatMessages,
  postReply,
  postFileMessage,
  patchMessage,
  deleteMessage,
  postChatAction,
  postWidgetAuth,
  postWidgetRefresh,
  postWidgetRevoke,
  postWidgetToken,
  getWidgetEvents,
  getWidgetMessages,
  postWidgetMessage,
  postConversation,
  getInbox,
  getConversationEvents,
  postWebhook,
  getWebhooks,
  deleteWebhook,
  postWebhookReplay,
  getWebhookDeliveries,
  getConversation,
  patchConversation,
  postParticipant,
  patchParticipant,
  deleteParticipant,
  postChannel,
  patchChannel,
  deleteChannel,
  postWidgetSession,
  getWidgetSessions,
  postTronQuote,
  postTronLease,
  getTronLeases,
  getTronLease,
];
