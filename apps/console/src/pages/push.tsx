import { useState } from "react";
import { ApiError } from "../api.js";
import { api } from "../client.js";
import { usd, when } from "../format.js";
import { ActionForm, Badge, Card, ErrorBox, Field, Table, useLoad } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";
import { KeyGate } from "./key-gate.js";

type Target =
  | { id: string; type: "webhook"; url: string; secret: string | null; enabled: boolean }
  | { id: string; type: "telegram"; bot_token: string | null; connected_account_id: string | null; chat_id: string | number; enabled: boolean };
/** The API types `config` loosely (each service has its own); a webhook-push instance's holds its targets. */
type PushInstance = ItemOf<"GET /console/services"> & { config: { targets: Target[] } };
type Sent = DataOf<"POST /v1/apps/webhook-push/{alias}/send">;
type TargetResult = Sent["results"][number];
/** What the page shows of a send: the HTTP status and its meaning, and the answer (or the error's body). */
type Outcome = { status: number; message: string; results: TargetResult[]; charged_units: number | null; message_id: string | null };
type PushMessage = ItemOf<"GET /console/services/webhook-push/{alias}/messages">;

const OUTCOME: Record<number, string> = {
  200: "delivered to every enabled target",
  207: "delivered to some targets; charged for those only",
  502: "no target accepted it; nothing charged",
  402: "the balance does not cover it; nothing sent",
  422: "no enabled target",
};

export function Push() {
  const instances = useLoad(() => api.data<PushInstance[]>("GET", "/console/services"));
  const push = (instances.data ?? []).filter((i) => i.service_id === "webhook-push");
  const [alias, setAlias] = useState("");
  const current = push.find((i) => i.alias === alias) ?? push[0];
  return (
    <>
      <Card
        title="Push instances"
        actions={
          push.length > 1 ? (
            <select aria-label="Push instance" value={current?.alias ?? ""} onChange={(e) => setAlias(e.target.value)}>
              {push.map((i) => (
                <option key={i.id} value={i.alias}>
                  {i.alias}
                </option>
              ))}
            </select>
          ) : null
        }
      >
        <ErrorBox error={instances.error} />
        {!current ? (
          <p className="muted">{instances.loading ? "Loading…" : "No push instance yet: create one under Instances (kind push)."}</p>
        ) : (
          <>
            <p>
              <code>webhook-push:{current.alias}</code> <Badge value={current.status} />
            </p>
            <Table
              rows={current.config.targets}
              rowKey={(t) => t.id}
              columns={[
                ["Target", (t) => <code>{t.id}</code>],
                ["Type", (t) => t.type],
                ["Destination", (t) => <span className="mono small">{t.type === "webhook" ? t.url : `chat ${t.chat_id}`}</span>],
                [
                  "Credential",
                  (t) =>
                    t.type === "webhook"
                      ? t.secret
                        ? "signed ([redacted])"
                        : "unsigned"
                      : t.connected_account_id
                        ? `account ${t.connected_account_id}`
                        : t.bot_token
                          ? "bot token ([redacted])"
                          : "none",
                ],
                ["Enabled", (t) => (t.enabled ? "yes" : "no (not sent to)")],
              ]}
            />
          </>
        )}
      </Card>
      {current ? (
        <>
          <Card title="Send a test message">
            <KeyGate scopes="push:send">{(key) => <SendTest alias={current.alias} apiKey={key} />}</KeyGate>
          </Card>
          <DeliveryLog key={current.alias} alias={current.alias} />
        </>
      ) : null}
    </>
  );
}

function SendTest({ alias, apiKey }: { alias: string; apiKey: string }) {
  const [title, setTitle] = useState("Test message");
  const [text, setText] = useState("Hello from the console.");
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const send = async () => {
    setOutcome(null);
    try {
      const res = await api.send<{ data: Sent }>("POST", `/v1/apps/webhook-push/${encodeURIComponent(alias)}/send`, {
        auth: { kind: "apiKey", key: apiKey },
        body: { title, text },
      });
      setOutcome({ status: res.status, message: OUTCOME[res.status] ?? "", ...res.body.data });
    } catch (err) {
      // 502 carries the per-target results; 402 and 422 mean nothing was sent.
      if (!(err instanceof ApiError) || ![402, 422, 502].includes(err.status)) throw err;
      const body = (err.body ?? {}) as { results?: TargetResult[]; charged_units?: number; message_id?: string };
      setOutcome({
        status: err.status,
        message: `${OUTCOME[err.status]} (${err.describe()})`,
        results: body.results ?? [],
        charged_units: body.charged_units ?? null,
        message_id: body.message_id ?? null,
      });
    }
  };
  return (
    <>
      <ActionForm onSubmit={send} submit="Send test message" busyText="Sending…">
        <div className="row">
          <Field label="Title">
            <input name="title" value={title} onChange={(e) => setTitle(e.target.value)} maxLength={256} required />
          </Field>
          <Field label="Text">
            <input name="text" value={text} onChange={(e) => setText(e.target.value)} maxLength={4096} required />
          </Field>
        </div>
      </ActionForm>
      {outcome ? (
        <div className={outcome.status === 200 ? "ok" : outcome.status === 207 ? "notice" : "error"} data-testid="push-outcome">
          <p>
            <strong>HTTP {outcome.status}</strong>: {outcome.message}
            {outcome.charged_units !== null ? ` · charged ${usd(outcome.charged_units)}` : ""}
            {outcome.message_id ? (
              <>
                {" · "}
                <code className="small">{outcome.message_id}</code>
              </>
            ) : null}
          </p>
          {outcome.results.length > 0 ? (
            <Table
              rows={outcome.results}
              rowKey={(r) => r.target_id}
              columns={[
                ["Target", (r) => <code>{r.target_id}</code>],
                ["Delivered", (r) => <Badge value={r.ok ? "delivered" : "failed"} />],
                ["HTTP status", (r) => r.status ?? "no answer"],
                ["Reason", (r) => r.error ?? ""],
              ]}
            />
          ) : null}
        </div>
      ) : null}
    </>
  );
}

function DeliveryLog({ alias }: { alias: string }) {
  const base = `/console/services/webhook-push/${encodeURIComponent(alias)}/messages`;
  const [older, setOlder] = useState<PushMessage[]>([]);
  const [olderError, setOlderError] = useState<unknown>(null);
  const log = useLoad(() => api.data<PushMessage[]>("GET", `${base}?limit=50`), [base]);
  const rows = [...(log.data ?? []), ...older];
  const more = async () => {
    setOlderError(null);
    try {
      setOlder([...older, ...(await api.data<PushMessage[]>("GET", `${base}?limit=50&before=${rows[rows.length - 1]!.id}`))]);
    } catch (err) {
      setOlderError(err);
    }
  };
  return (
    <Card
      title="Delivery log"
      actions={
        <button
          className="secondary"
          onClick={() => {
            setOlder([]);
            log.reload();
          }}
        >
          Refresh
        </button>
      }
    >
      <ErrorBox error={log.error ?? olderError} />
      <Table
        rows={rows}
        rowKey={(m) => m.id}
        empty="Nothing sent yet."
        columns={[
          ["Message", (m) => <code className="small">{m.id}</code>],
          ["Sent", (m) => when(m.created_at)],
          ["Status", (m) => <Badge value={m.status} />],
          ["Charged", (m) => usd(m.charged_units)],
          [
            "Targets",
            (m) => (
              <ul className="plain small">
                {m.deliveries.map((d) => (
                  <li key={d.target_id}>
                    <code>{d.target_id}</code> ({d.type}): {d.ok === null ? "pending" : d.ok ? "delivered" : "failed"}
                    {d.status !== null ? `, HTTP ${d.status}` : ""}
                    {d.error ? `, ${d.error}` : ""}
                  </li>
                ))}
              </ul>
            ),
          ],
        ]}
      />
      {rows.length > 0 && rows.length % 50 === 0 ? (
        <button className="secondary" onClick={() => void more()}>
          Older messages
        </button>
      ) : null}
    </Card>
  );
}
