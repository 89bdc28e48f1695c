import { useState } from "react";
import { api } from "../client.js";
import { listOrUndefined, when } from "../format.js";
import { ActionForm, Badge, Card, ErrorBox, Field, Refresh, Select, Table, useLoad } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";
import type { Channel, Conversation, Participant } from "./inbox-data.js";
import { KeyGate } from "./key-gate.js";

type Auth = { kind: "apiKey"; key: string };
type Webhook = ItemOf<"GET /v1/conversations/webhooks">;
type Delivery = ItemOf<"GET /v1/conversations/webhooks/{webhookId}/deliveries">;
type WidgetGrant = DataOf<"POST /v1/conversations/{id}/widget-session">;
type Replay = DataOf<"POST /v1/conversations/webhooks/{webhookId}/replay">;
type WidgetSession = ItemOf<"GET /v1/conversations/{id}/widget-sessions">;

const KINDS = ["visitor", "agent", "bot", "external"];
const ROLES = ["member", "owner", "observer"];
type ChannelType = Channel["type"];
const CHANNEL_TYPES: readonly ChannelType[] = ["external", "bot_chat", "socialops"];

export function Conversations() {
  return (
    <KeyGate scopes="conversation:read and conversation:write (conversations), conversation:events:write (webhooks), bot:send (ending a chat)">
      {(key) => <ConversationsView auth={{ kind: "apiKey", key }} />}
    </KeyGate>
  );
}

function ConversationsView({ auth }: { auth: Auth }) {
  const [status, setStatus] = useState("");
  const list = useLoad(
    () => api.data<Conversation[]>("GET", `/v1/conversations/inbox?limit=100${status ? `&status=${status}` : ""}`, { auth }),
    [auth.key, status],
  );
  const [selected, setSelected] = useState<string | null>(null);
  const [subject, setSubject] = useState("");
  return (
    <>
      <Card
        title="Conversations"
        actions={
          <select aria-label="Status" value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any status</option>
            {["open", "pending", "closed"].map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        }
      >
        <ErrorBox error={list.error} />
        <Table
          rows={list.data ?? []}
          rowKey={(c) => c.id}
          empty="No conversations."
          columns={[
            ["Subject", (c) => c.subject ?? <span className="muted">(none)</span>],
            ["Status", (c) => <Badge value={c.status} />],
            ["Participants", (c) => c.participants.length],
            ["Channels", (c) => c.channels.map((ch) => ch.type).join(", ") || "—"],
            ["Last activity", (c) => when(c.last_activity_at)],
            [
              "",
              (c) => (
                <button className="secondary" onClick={() => setSelected(c.id)}>
                  Open
                </button>
              ),
            ],
          ]}
        />
        <h3>New conversation</h3>
        <ActionForm
          submit="Create conversation"
          onSubmit={async () => {
            const created = await api.data<Conversation>("POST", "/v1/conversations", { auth, body: subject ? { subject } : {} });
            setSubject("");
            list.reload();
            setSelected(created.id);
          }}
        >
          <Field label="Subject">
            <input name="subject" value={subject} onChange={(e) => setSubject(e.target.value)} maxLength={256} />
          </Field>
        </ActionForm>
      </Card>
      {selected ? <ConversationDetail key={selected} id={selected} auth={auth} onChanged={list.reload} /> : null}
      <Webhooks auth={auth} />
    </>
  );
}

function ConversationDetail({ id, auth, onChanged }: { id: string; auth: Auth; onChanged: () => void }) {
  const conv = useLoad(() => api.data<Conversation>("GET", `/v1/conversations/${id}`, { auth }), [id, auth.key]);
  const [rowError, setRowError] = useState<unknown>(null);
  const [participant, setParticipant] = useState({ kind: "agent", external_id: "", display_name: "", role: "member" });
  const [channel, setChannel] = useState({ type: "external", ref: "" });
  const [editing, setEditing] = useState<{ id: string; type: ChannelType; ref: string } | null>(null);
  const [visitor, setVisitor] = useState({ visitor_id: "", display_name: "" });
  const base = `/v1/conversations/${id}`;
  const [changes, setChanges] = useState(0);
  const changed = () => {
    setChanges((n) => n + 1);
    conv.reload();
    onChanged();
  };
  const act = async (fn: () => Promise<unknown>) => {
    setRowError(null);
    try {
      await fn();
      changed();
    } catch (err) {
      setRowError(err);
    }
  };
  const c = conv.data;
  return (
    <Card
      title={c ? `Conversation: ${c.subject ?? c.id}` : "Conversation"}
      actions={
        c ? (
          <span className="muted small">
            {c.id} · version {c.version}
          </span>
        ) : null
      }
    >
      <ErrorBox error={conv.error ?? rowError} />
      {c ? (
        <>
          <div className="row-actions">
            <span>Status:</span>
            {(["open", "pending", "closed"] as const).map((s) => (
              <button
                key={s}
                className={s === c.status ? "" : "secondary"}
                disabled={s === c.status}
                onClick={() => void act(() => api.data("PATCH", base, { auth, body: { status: s, version: c.version } }))}
              >
                {s}
              </button>
            ))}
          </div>
          <h3>Participants</h3>
          <Table
            rows={c.participants}
            rowKey={(p) => p.id}
            empty="No participants."
            columns={[
              ["Name", (p) => p.display_name ?? <span className="muted">{p.external_id}</span>],
              ["Kind", (p) => p.kind],
              ["External id", (p) => <code className="small">{p.external_id}</code>],
              [
                "Role",
                (p: Participant) => (
                  <Select
                    aria-label={`Role of ${p.external_id}`}
                    value={p.role}
                    onChange={(e) => void act(() => api.data("PATCH", `${base}/participants/${p.id}`, { auth, body: { role: e.target.value } }))}
                    options={ROLES}
                  />
                ),
              ],
              [
                "",
                (p) => (
                  <button className="danger" onClick={() => void act(() => api.send("DELETE", `${base}/participants/${p.id}`, { auth }))}>
                    Remove
                  </button>
                ),
              ],
            ]}
          />
          <ActionForm
            submit="Add participant"
            onSubmit={async () => {
              const body = {
                kind: participant.kind,
                external_id: participant.external_id,
                role: participant.role,
                ...(participant.display_name ? { display_name: participant.display_name } : {}),
              };
              await api.data("POST", `${base}/participants`, { auth, body });
              setParticipant({ ...participant, external_id: "", display_name: "" });
              changed();
            }}
          >
            <div className="row">
              <Field label="Kind">
                <Select value={participant.kind} onChange={(e) => setParticipant({ ...participant, kind: e.target.value })} options={KINDS} />
              </Field>
              <Field label="External id">
                <input value={participant.external_id} onChange={(e) => setParticipant({ ...participant, external_id: e.target.value })} required />
              </Field>
              <Field label="Display name">
                <input value={participant.display_name} onChange={(e) => setParticipant({ ...participant, display_name: e.target.value })} />
              </Field>
              <Field label="Role">
                <Select value={participant.role} onChange={(e) => setParticipant({ ...participant, role: e.target.value })} options={ROLES} />
              </Field>
            </div>
          </ActionForm>
          <h3>Channels</h3>
          <Table
            rows={c.channels}
            rowKey={(ch) => ch.id}
            empty="No channels."
            columns={[
              [
                "Type",
                (ch) =>
                  editing?.id === ch.id ? (
                    <Select
                      aria-label={`New type of ${ch.ref}`}
                      value={editing.type}
                      onChange={(e) => setEditing({ ...editing, type: e.target.value as ChannelType })}
                      options={CHANNEL_TYPES}
                    />
                  ) : (
                    ch.type
                  ),
              ],
              [
                "Reference",
                (ch) =>
                  editing?.id === ch.id ? (
                    <input
                      aria-label={`New reference of ${ch.ref}`}
                      value={editing.ref}
                      onChange={(e) => setEditing({ ...editing, ref: e.target.value })}
                      maxLength={256}
                    />
                  ) : (
                    <code className="small">{ch.ref}</code>
                  ),
              ],
              [
                "",
                (ch) =>
                  editing?.id === ch.id ? (
                    <div className="row-actions">
                      <button
                        onClick={() =>
                          void act(async () => {
                            await api.data("PATCH", `${base}/channels/${ch.id}`, { auth, body: { type: editing.type, ref: editing.ref } });
                            setEditing(null);
                          })
                        }
                      >
                        Save channel
                      </button>
                      <button className="secondary" onClick={() => setEditing(null)}>
                        Cancel
                      </button>
                    </div>
                  ) : (
                    <div className="row-actions">
                      <button className="secondary" onClick={() => setEditing({ id: ch.id, type: ch.type, ref: ch.ref })}>
                        Change
                      </button>
                      <button className="danger" onClick={() => void act(() => api.send("DELETE", `${base}/channels/${ch.id}`, { auth }))}>
                        Remove
                      </button>
                    </div>
                  ),
              ],
            ]}
          />
          <p className="small muted">
            Changing or removing a bot_chat channel moves the chat out of this conversation: its later messages no longer appear here.
          </p>
          <ActionForm
            submit="Attach channel"
            onSubmit={async () => {
              await api.data("POST", `${base}/channels`, { auth, body: channel });
              setChannel({ ...channel, ref: "" });
              changed();
            }}
          >
            <div className="row">
              <Field label="Channel type">
                <Select value={channel.type} onChange={(e) => setChannel({ ...channel, type: e.target.value })} options={CHANNEL_TYPES} />
              </Field>
              <Field label="Reference" hint="bot_chat: a chat id; socialops: a thread id; external: your own reference.">
                <input value={channel.ref} onChange={(e) => setChannel({ ...channel, ref: e.target.value })} required />
              </Field>
            </div>
          </ActionForm>
          <h3>Widget sessions</h3>
          <p className="small muted">
            A widget session in this conversation makes the visitor's chat a channel and the visitor a participant. Your site's server normally opens it; here
            you can open one to hand a visitor a chat (the tokens stay out of this page), or end a chat's sessions at once.
          </p>
          <WidgetSessions key={`${id}:${changes}`} conversationId={id} auth={auth} onChanged={changed} />
          <ActionForm
            submit="Open widget session"
            onSubmit={async () => {
              const grant = await api.data<WidgetGrant>("POST", `${base}/widget-session`, {
                auth,
                body: { visitor_id: visitor.visitor_id, ...(visitor.display_name ? { display_name: visitor.display_name } : {}) },
              });
              setVisitor({ visitor_id: "", display_name: "" });
              changed();
              return `Session ${grant.session_id} opened in chat ${grant.chat_id} (token valid ${grant.expires_in} s).`;
            }}
          >
            <div className="row">
              <Field label="Visitor id">
                <input value={visitor.visitor_id} onChange={(e) => setVisitor({ ...visitor, visitor_id: e.target.value })} required />
              </Field>
              <Field label="Visitor name">
                <input value={visitor.display_name} onChange={(e) => setVisitor({ ...visitor, display_name: e.target.value })} />
              </Field>
            </div>
          </ActionForm>
        </>
      ) : null}
    </Card>
  );
}

function WidgetSessions({ conversationId, auth, onChanged }: { conversationId: string; auth: Auth; onChanged: () => void }) {
  const sessions = useLoad(() => api.data<WidgetSession[]>("GET", `/v1/conversations/${conversationId}/widget-sessions`, { auth }), [conversationId, auth.key]);
  const [error, setError] = useState<unknown>(null);
  const end = async (chatId: string) => {
    setError(null);
    try {
      await api.data("POST", `/v1/apps/bot/chats/${encodeURIComponent(chatId)}/actions`, { auth, body: { action: "end" } });
      sessions.reload();
      onChanged();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <>
      <ErrorBox error={sessions.error ?? error} />
      <Table
        rows={sessions.data ?? []}
        rowKey={(s) => s.id}
        empty="No widget sessions in this conversation."
        columns={[
          ["Visitor", (s) => s.display_name ?? s.visitor_id],
          ["Chat", (s) => <code className="small">{s.chat_id}</code>],
          ["Status", (s) => <Badge value={s.status} />],
          ["Ended", (s) => (s.ended_at ? `${when(s.ended_at)} (${s.ended_reason ?? ""})` : "—")],
          ["Opened", (s) => when(s.created_at)],
          [
            "",
            (s) =>
              s.status === "live" ? (
                <button className="danger" onClick={() => void end(s.chat_id)}>
                  End chat
                </button>
              ) : null,
          ],
        ]}
      />
    </>
  );
}

function Webhooks({ auth }: { auth: Auth }) {
  const hooks = useLoad(() => api.data<Webhook[]>("GET", "/v1/conversations/webhooks", { auth }), [auth.key]);
  const [form, setForm] = useState({ url: "", secret: "", events: "" });
  const [open, setOpen] = useState<string | null>(null);
  const [rowError, setRowError] = useState<unknown>(null);
  const [replayed, setReplayed] = useState<string | null>(null);
  const act = async (fn: () => Promise<unknown>) => {
    setRowError(null);
    setReplayed(null);
    try {
      await fn();
      hooks.reload();
    } catch (err) {
      setRowError(err);
    }
  };
  return (
    <Card title="Conversation webhooks" actions={<Refresh load={hooks} />}>
      <ErrorBox error={hooks.error ?? rowError} />
      {replayed ? <div className="ok">{replayed}</div> : null}
      <Table
        rows={hooks.data ?? []}
        rowKey={(w) => w.id}
        empty="No webhooks."
        columns={[
          ["Webhook", (w) => <code className="small">{w.id}</code>],
          ["URL", (w) => <span className="mono small">{w.url}</span>],
          ["Events", (w) => (w.event_types.length ? w.event_types.join(", ") : "all")],
          ["Status", (w) => <Badge value={w.status} />],
          ["Created", (w) => when(w.created_at)],
          [
            "",
            (w) => (
              <div className="row-actions">
                <button className="secondary" onClick={() => setOpen(open === w.id ? null : w.id)}>
                  Deliveries
                </button>
                {w.status === "active" ? (
                  <>
                    <button
                      className="secondary"
                      onClick={() =>
                        void act(async () => {
                          const r = await api.data<Replay>("POST", `/v1/conversations/webhooks/${w.id}/replay`, { auth, body: {} });
                          setReplayed(`Replay of ${w.id}: ${r.queued} events queued (cursor ${r.from_cursor || "start"} → ${r.next_cursor}).`);
                          setOpen(w.id);
                        })
                      }
                    >
                      Replay
                    </button>
                    <button className="danger" onClick={() => void act(() => api.send("DELETE", `/v1/conversations/webhooks/${w.id}`, { auth }))}>
                      Revoke
                    </button>
                  </>
                ) : null}
              </div>
            ),
          ],
        ]}
      />
      {open ? <Deliveries key={`${open}:${replayed ?? ""}`} webhookId={open} auth={auth} /> : null}
      <h3>Register a webhook</h3>
      <ActionForm
        submit="Register webhook"
        onSubmit={async () => {
          const event_types = listOrUndefined(form.events);
          await api.data("POST", "/v1/conversations/webhooks", { auth, body: { url: form.url, secret: form.secret, ...(event_types ? { event_types } : {}) } });
          setForm({ url: "", secret: "", events: "" });
          hooks.reload();
          return "Registered. The secret is stored encrypted and never shown again.";
        }}
      >
        <div className="row">
          <Field label="Webhook URL">
            <input value={form.url} onChange={(e) => setForm({ ...form, url: e.target.value })} required />
          </Field>
          <Field label="Signing secret" hint="16 to 256 characters.">
            <input type="password" autoComplete="off" value={form.secret} onChange={(e) => setForm({ ...form, secret: e.target.value })} required />
          </Field>
          <Field label="Event types" hint="Comma-separated (e.g. message.created); empty: all.">
            <input value={form.events} onChange={(e) => setForm({ ...form, events: e.target.value })} />
          </Field>
        </div>
      </ActionForm>
    </Card>
  );
}

function Deliveries({ webhookId, auth }: { webhookId: string; auth: Auth }) {
  const list = useLoad(() => api.data<Delivery[]>("GET", `/v1/conversations/webhooks/${webhookId}/deliveries`, { auth }), [webhookId, auth.key]);
  return (
    <div className="subcard">
      <h3>
        Deliveries of <code>{webhookId}</code>{" "}
        <button className="link" onClick={list.reload}>
          refresh
        </button>
      </h3>
      <ErrorBox error={list.error} />
      <Table
        rows={list.data ?? []}
        rowKey={(d) => d.id}
        empty="No deliveries."
        columns={[
          ["Event", (d) => `${d.event_type} #${d.cursor}`],
          ["State", (d) => <Badge value={d.state} />],
          ["Attempts", (d) => d.attempts],
          ["Last answer", (d) => (d.last_status !== null ? `HTTP ${d.last_status}` : (d.last_error ?? "—"))],
          ["Replay", (d) => (d.replay ? "yes" : "no")],
          ["Next attempt", (d) => when(d.next_attempt_at)],
          ["Updated", (d) => when(d.updated_at)],
        ]}
      />
    </div>
  );
}
