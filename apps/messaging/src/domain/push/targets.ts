import { deliver, OPERATOR_EGRESS, postSigned, type EgressPolicy } from "@gateway/outbound";
import type { ConnectedAccountResolver } from "../app-context.js";
import { isAppError } from "@gateway/errors";
import type { Keyring } from "@gateway/secrets";
import { openSecret, targetBotTokenContext, targetSecretContext, type StoredTarget } from "../instances/config.js";

export type PushPayload = { message_id: string; title: string; text: string; sent_at: string };
export type TargetOutcome = { ok: boolean; status: number | null; error: string | null };

export type TargetDeps = {
  keyring: Keyring;
  egress: EgressPolicy;
  timeoutMs: number;
  telegramApiBase: string;
  resolveConnectedAccount: ConnectedAccountResolver;
};

function failure(status: number | null, error: string | null): TargetOutcome {
  return { ok: false, status, error: error ?? (status !== null ? `http_${status}` : "failed") };
}

/**
 * Webhook target: POST url with the JSON payload, signed over the exact body
 * bytes with the target's secret when it has one; 2xx within the timeout is
 * delivered. The URL is checked (and pinned) against the egress policy on every
 * hop by `deliver`.
 */
async function sendWebhook(
  deps: TargetDeps,
  instanceId: string,
  target: Extract<StoredTarget, { type: "webhook" }>,
  payload: PushPayload,
): Promise<TargetOutcome> {
  const secret = target.secret ? openSecret(deps.keyring, target.secret, targetSecretContext(instanceId, target.id)) : null;
  const res = await postSigned(target.url, {
    body: JSON.stringify(payload),
    secret,
    eventId: payload.message_id,
    timeoutMs: deps.timeoutMs,
    policy: deps.egress,
  });
  return res.ok ? { ok: true, status: res.status, error: null } : failure(res.status, res.error);
}

/**
 * Chat-messenger target: `POST {TELEGRAM_API_BASE}/bot<token>/sendMessage {chat_id, text}`
 * with the bot token of the target or of its connected account; delivered when
 * the answer says `ok: true`. The base URL is the operator's, not the customer's
 * (`OPERATOR_EGRESS`): no customer-supplied URL is called here.
 */
async function sendTelegram(
  deps: TargetDeps,
  tenantId: string,
  instanceId: string,
  target: Extract<StoredTarget, { type: "telegram" }>,
  payload: PushPayload,
): Promise<TargetOutcome> {
  let token: string;
  if (target.bot_token) {
    token = openSecret(deps.keyring, target.bot_token, targetBotTokenContext(instanceId, target.id));
  } else if (target.connected_account_id) {
    try {
      const account = await deps.resolveConnectedAccount(tenantId, target.connected_account_id);
      if (account.provider !== "telegram") return failure(null, "connected_account_not_telegram");
      token = account.secret;
    } catch (err) {
      return failure(null, isAppError(err) && err.code === "not_found" ? "connected_account_not_found" : "connected_account_unavailable");
    }
  } else {
    return failure(null, "no_bot_token");
  }
  const url = `${deps.telegramApiBase.replace(/\/+$/, "")}/bot${token}/sendMessage`;
  const body = JSON.stringify({ chat_id: target.chat_id, text: `${payload.title}\n\n${payload.text}` });
  const res = await deliver(url, {
    method: "POST",
    body,
    headers: { "content-type": "application/json" },
    timeoutMs: deps.timeoutMs,
    policy: OPERATOR_EGRESS,
  });
  let answerOk = false;
  try {
    answerOk = res.body !== undefined && (JSON.parse(res.body) as { ok?: unknown }).ok === true;
  } catch {
    answerOk = false;
  }
  if (answerOk) return { ok: true, status: res.status, error: null };
  // The error text of `deliver` never carries the URL's token (it names the failure only); a status speaks for itself.
  return failure(res.status, res.status !== null && res.ok ? "telegram_not_ok" : res.status !== null ? `http_${res.status}` : "unreachable");
}

/** One target's delivery; never throws. */
export async function sendToTarget(deps: TargetDeps, tenantId: string, instanceId: string, target: StoredTarget, payload: PushPayload): Promise<TargetOutcome> {
  try {
    return target.type === "webhook" ? await sendWebhook(deps, instanceId, target, payload) : await sendTelegram(deps, tenantId, instanceId, target, payload);
  } catch {
    return failure(null, "internal_error");
  }
}
