import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { describeError } from "../api.js";
import { api } from "../client.js";
import { when } from "../format.js";
import { ActionForm, Badge, Card, ErrorBox, Field, useLoad } from "../ui.js";
import { chatMessages, chatOf, FeedFollower, loadInbox, type ChatMessage, type Item, type SocialMessage } from "./inbox-data.js";
import { KeyGate } from "./key-gate.js";

/** Poll the feed this often at its head (a full page is followed at once). */
const FEED_MS = 2000;
/** SocialOps has no feed: its threads are read again this often while the inbox is open. */
const SOCIALOPS_MS = 15_000;

type Auth = { kind: "apiKey"; key: string };

// When this browser last read each chat: unread = visitor messages after it.
const READ_KEY = "gateway-console-read";
const readMarks = (): Record<string, string> => {
  try {
    return JSON.parse(window.localStorage.getItem(READ_KEY) ?? "{}") as Record<string, string>;
  } catch {
    return {};
  }
};
const markRead = (chatId: string, at: string) => window.localStorage.setItem(READ_KEY, JSON.stringify({ ...readMarks(), [chatId]: at }));

export function Inbox() {
  return (
    <KeyGate scopes="bot:send and bot:events:read (widget chats), socialops:read and socialops:write (SocialOps threads), conversation:read (conversations)">
      {(key) => <InboxView apiKey={key} />}
    </KeyGate>
  );
}

function InboxView({ apiKey }: { apiKey: string }) {
  // One object per key: the feed below restarts only when the key changes.
  const auth = useMemo<Auth>(() => ({ kind: "apiKey", key: apiKey }), [apiKey]);
  const [unread, setUnread] = useState<Record<string, number>>({});
  const unreadRef = useRef(unread);
  unreadRef.current = unread;
  const [tick, setTick] = useState(0);
  const inbox = useLoad(() => loadInbox(api, auth), [auth.key, tick]);
  const [source, setSource] = useState("all");
  const [state, setState] = useState("all");
  const [selected, setSelected] = useState<string | null>(null);
  const [feedError, setFeedError] = useState<unknown>(null);
  const [incoming, setIncoming] = useState<ChatMessage[]>([]);
  const openChatRef = useRef<string | null>(null);

  // Unread counts of chats this browser has not read up to their last message.
  useEffect(() => {
    const items = inbox.data?.items ?? [];
    const marks = readMarks();
    const stale: { id: string; last_message_at: string }[] = [];
    for (const i of items) {
      const id = i.kind === "chat" ? i.chat.id : i.kind === "conversation" ? chatOf(i.conversation) : null;
      const at = i.kind === "chat" ? i.chat.last_message_at : i.activity;
      if (id && at && !(id in unreadRef.current) && (marks[id] ?? "") < at) stale.push({ id, last_message_at: at });
    }
    const first = stale.slice(0, 20);
    if (first.length === 0) return;
    void Promise.all(
      first.map(async (c) => {
        const messages = await chatMessages(api, auth, c.id).catch(() => [] as ChatMessage[]);
        return [c.id, messages.filter((m) => m.author === "visitor" && m.created_at > (marks[c.id] ?? "")).length] as const;
      }),
    ).then((counts) => setUnread((u) => ({ ...Object.fromEntries(counts), ...u })));
  }, [inbox.data, auth]);

  // New messages arrive through the widget feed; SocialOps threads are read again now and then.
  useEffect(() => {
    const feed = new FeedFollower(api, auth);
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      let more = false;
      try {
        const { events, more: full } = await feed.next();
        more = full;
        setFeedError(null);
        const messages = events.filter((e) => e.type.startsWith("message.")).map((e) => e.data as ChatMessage);
        const created = events.filter((e) => e.type === "message.created").map((e) => e.data as ChatMessage);
        if (messages.length > 0 && live) {
          setIncoming((list) => [...list, ...messages]);
          setUnread((u) => {
            const next = { ...u };
            for (const m of created) if (m.author === "visitor" && m.chat_id !== openChatRef.current) next[m.chat_id] = (next[m.chat_id] ?? 0) + 1;
            return next;
          });
          setTick((t) => t + 1);
        }
      } catch (err) {
        setFeedError(err);
      }
      if (live) timer = setTimeout(() => void poll(), more ? 0 : FEED_MS);
    };
    void poll();
    const social = setInterval(() => setTick((t) => t + 1), SOCIALOPS_MS);
    return () => {
      live = false;
      clearTimeout(timer);
      clearInterval(social);
    };
  }, [auth]);

  // Chats' unread counts come from this browser's read marks and the feed; threads' from the API.
  const all = useMemo(
    () =>
      (inbox.data?.items ?? []).map((i) =>
        i.kind === "thread" ? i : { ...i, unread: unread[(i.kind === "chat" ? i.chat.id : chatOf(i.conversation)) ?? ""] ?? 0 },
      ),
    [inbox.data, unread],
  );
  const items = all.filter((i) => (source === "all" || i.source === source) && (state === "all" || i.state === state));
  const current = all.find((i) => i.key === selected) ?? null;
  openChatRef.current = current?.kind === "chat" ? current.chat.id : current?.kind === "conversation" ? chatOf(current.conversation) : null;
  const totalUnread = all.reduce((n, i) => n + i.unread, 0);

  const read = useCallback((chatId: string, at: string) => {
    markRead(chatId, at);
    setUnread((u) => ({ ...u, [chatId]: 0 }));
  }, []);

  return (
    <div className="inbox">
      <Card
        title={`Conversations${totalUnread ? ` (${totalUnread} unread)` : ""}`}
        actions={
          <div className="row-actions">
            <select aria-label="Instance" value={source} onChange={(e) => setSource(e.target.value)}>
              <option value="all">All instances</option>
              {(inbox.data?.sources ?? []).map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
            <select aria-label="State" value={state} onChange={(e) => setState(e.target.value)}>
              {["all", "open", "pending", "closed"].map((s) => (
                <option key={s} value={s}>
                  {s === "all" ? "Any state" : s}
                </option>
              ))}
            </select>
          </div>
        }
      >
        <ErrorBox error={inbox.error ?? feedError} />
        {(inbox.data?.problems ?? []).map((p) => (
          <div key={p.source} className="notice small" role="status">
            {p.source}: {describeError(p.error)}
          </div>
        ))}
        {items.length === 0 ? (
          <p className="muted">{inbox.loading && !inbox.data ? "Loading…" : "No conversations yet."}</p>
        ) : (
          <ul className="inbox-list" aria-label="Inbox">
            {items.map((i) => (
              <li key={i.key}>
                <button
                  type="button"
                  className={`inbox-item${i.key === selected ? " active" : ""}`}
                  onClick={() => setSelected(i.key)}
                  data-testid="inbox-item"
                >
                  <span className="inbox-title">{i.title}</span>
                  {i.unread > 0 ? (
                    // biome-ignore lint/a11y/useAriaPropsSupportedByRole: left as it was (issue 25); a role or hidden text would change what readers announce
                    <span className="unread" aria-label={`${i.unread} unread`}>
                      {i.unread}
                    </span>
                  ) : null}
                  <span className="inbox-meta">
                    {i.source} · <Badge value={i.state} /> · {when(i.activity)}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        )}
      </Card>
      {current ? (
        <ThreadView key={current.key} item={current} auth={auth} incoming={incoming} onRead={read} onChanged={() => setTick((t) => t + 1)} />
      ) : (
        <Card title="Thread">
          <p className="muted">Choose a conversation.</p>
        </Card>
      )}
    </div>
  );
}

function ThreadView({
  item,
  auth,
  incoming,
  onRead,
  onChanged,
}: {
  item: Item;
  auth: Auth;
  incoming: ChatMessage[];
  onRead: (chatId: string, at: string) => void;
  onChanged: () => void;
}) {
  if (item.kind === "thread") return <SocialThread alias={item.alias} threadId={item.thread.id} title={item.title} auth={auth} onChanged={onChanged} />;
  const chatId = item.kind === "chat" ? item.chat.id : chatOf(item.conversation);
  return (
    <Card
      title={item.title}
      actions={
        <span className="muted small">
          {item.kind === "chat" ? `widget chat · visitor ${item.chat.visitor_id}` : `conversation ${item.conversation.id} · ${item.conversation.status}`}
        </span>
      }
    >
      {item.kind === "conversation" ? (
        <p className="small muted">
          Participants: {item.conversation.participants.map((p) => `${p.display_name ?? p.external_id} (${p.kind}, ${p.role})`).join("; ") || "none"}. Channels:{" "}
          {item.conversation.channels.map((c) => `${c.type} ${c.ref}`).join("; ") || "none"}.
        </p>
      ) : null}
      {chatId ? (
        <ChatThread chatId={chatId} auth={auth} incoming={incoming} onRead={onRead} />
      ) : (
        <p className="muted">This conversation has no widget chat channel: its messages live in your own systems.</p>
      )}
    </Card>
  );
}

function ChatThread({ chatId, auth, incoming, onRead }: { chatId: string; auth: Auth; incoming: ChatMessage[]; onRead: (chatId: string, at: string) => void }) {
  const history = useLoad(() => chatMessages(api, auth, chatId), [chatId, auth.key]);
  const [text, setText] = useState("");
  const messages = useMemo(() => {
    const byId = new Map<string, ChatMessage>();
    for (const m of history.data ?? []) byId.set(m.id, m);
    for (const m of incoming) if (m.chat_id === chatId) byId.set(m.id, m);
    return [...byId.values()].sort((a, b) => (a.created_at === b.created_at ? a.id.localeCompare(b.id) : a.created_at.localeCompare(b.created_at)));
  }, [history.data, incoming, chatId]);
  const last = messages[messages.length - 1];
  useEffect(() => {
    if (last) onRead(chatId, last.created_at);
  }, [chatId, last, onRead]);
  return (
    <>
      <ErrorBox error={history.error} />
      <ol className="messages" aria-label="Messages">
        {messages.map((m) => (
          <li key={m.id} className={`message ${m.author === "visitor" ? "in" : "out"}`} data-author={m.author}>
            <div className="message-text">{m.deleted ? <em>(deleted)</em> : (m.text ?? (m.file_id ? `file ${m.file_id}` : ""))}</div>
            <div className="message-meta">
              {m.author === "visitor" ? "visitor" : "you"} · {when(m.created_at)}
              {m.author === "bot" ? " · delivered to the chat" : ""}
              {m.edited_at ? " · edited" : ""}
            </div>
          </li>
        ))}
      </ol>
      <ActionForm
        submit="Send reply"
        busyText="Sending…"
        onSubmit={async () => {
          await api.data("POST", "/v1/apps/bot/messages/reply", { auth, body: { chat_id: chatId, text } });
          setText("");
          history.reload();
        }}
      >
        <Field label="Reply">
          <textarea name="reply" rows={3} value={text} onChange={(e) => setText(e.target.value)} required maxLength={4096} />
        </Field>
      </ActionForm>
    </>
  );
}

function SocialThread({ alias, threadId, title, auth, onChanged }: { alias: string; threadId: string; title: string; auth: Auth; onChanged: () => void }) {
  const base = `/v1/apps/socialops/${encodeURIComponent(alias)}/threads/${encodeURIComponent(threadId)}`;
  const messages = useLoad(() => api.data<SocialMessage[]>("GET", `${base}/messages`, { auth }), [base, auth.key]);
  const [text, setText] = useState("");
  // Queued replies change state later: read the thread again while any is queued.
  const pending = (messages.data ?? []).some((m) => m.delivery?.state === "queued");
  useEffect(() => {
    if (!pending) return;
    const t = setTimeout(messages.reload, FEED_MS);
    return () => clearTimeout(t);
  }, [pending, messages]);
  return (
    <Card
      title={title}
      actions={
        <span className="muted small">
          socialops:{alias} · thread {threadId}
        </span>
      }
    >
      <ErrorBox error={messages.error} />
      <ol className="messages" aria-label="Messages">
        {(messages.data ?? []).map((m) => (
          <li key={m.id} className={`message ${m.direction === "inbound" ? "in" : "out"}`} data-direction={m.direction}>
            <div className="message-text">{m.text}</div>
            <div className="message-meta">
              {m.author ?? (m.direction === "inbound" ? "customer" : "you")} · {when(m.created_at)}
              {m.delivery ? (
                <>
                  {" · "}
                  <Badge value={m.delivery.state} />
                  {m.delivery.state === "failed" && m.delivery.error ? (
                    <span className="bad">
                      {" "}
                      {m.delivery.error}
                      {m.delivery.last_status ? ` (HTTP ${m.delivery.last_status})` : ""}
                    </span>
                  ) : null}
                  {m.delivery.attempts > 1 ? ` · ${m.delivery.attempts} attempts` : ""}
                </>
              ) : null}
            </div>
          </li>
        ))}
      </ol>
      <ActionForm
        submit="Send reply"
        busyText="Queueing…"
        onSubmit={async () => {
          await api.data("POST", `${base}/replies`, { auth, body: { text } });
          setText("");
          messages.reload();
          onChanged();
          return "Reply queued; its delivery state shows on the message.";
        }}
      >
        <Field label="Reply">
          <textarea name="reply" rows={3} value={text} onChange={(e) => setText(e.target.value)} required maxLength={4096} />
        </Field>
      </ActionForm>
    </Card>
  );
}
