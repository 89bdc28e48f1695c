// The embeddable chat widget (served by the edge as /widget.js, docs/decisions/0178).
// A page includes it with
//   <script src="https://GATEWAY/widget.js" data-session-url="/your/widget-session" async></script>
// and its own server answers POST data-session-url {visitor_id} by calling the gateway's
// POST /v1/apps/bot/widget/auth with its API key: the key never reaches the browser.
// Everything lives in a shadow root (no styles leak either way); text is set with
// textContent only; styles are a constructed stylesheet (no inline style or script, so
// a host page with a strict CSP needs only script-src and connect-src for the gateway).
import { WidgetSession, type WidgetMessage } from "./session.js";

const CSS = `
:host { all: initial; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; }
.launcher { position: fixed; right: 20px; bottom: 20px; z-index: 2147483000; border: 0; border-radius: 999px; padding: 12px 18px; background: var(--gw-accent, #2f5bd3); color: #fff; font: inherit; font-weight: 600; cursor: pointer; box-shadow: 0 4px 14px rgba(0,0,0,.2); }
.panel { position: fixed; right: 20px; bottom: 76px; z-index: 2147483000; width: 340px; max-width: calc(100vw - 40px); height: 440px; max-height: calc(100vh - 110px); display: flex; flex-direction: column; background: #fff; border: 1px solid #e3e6eb; border-radius: 12px; box-shadow: 0 10px 30px rgba(0,0,0,.18); overflow: hidden; }
.panel[hidden] { display: none; }
header { background: var(--gw-accent, #2f5bd3); color: #fff; padding: 10px 14px; font-weight: 600; display: flex; justify-content: space-between; align-items: center; }
header small { font-weight: 400; opacity: .85; }
.log { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 6px; background: #f5f6f8; }
.msg { max-width: 80%; padding: 7px 10px; border-radius: 10px; white-space: pre-wrap; word-wrap: break-word; }
.msg.visitor { align-self: flex-end; background: var(--gw-accent, #2f5bd3); color: #fff; }
.msg.bot { align-self: flex-start; background: #fff; border: 1px solid #e3e6eb; }
.msg.deleted { font-style: italic; opacity: .6; }
.empty, .typing { color: #667085; font-size: 12px; text-align: center; }
form { display: flex; gap: 6px; padding: 8px; border-top: 1px solid #e3e6eb; }
input { flex: 1; font: inherit; padding: 7px 9px; border: 1px solid #cfd4dc; border-radius: 8px; min-width: 0; }
button.send { font: inherit; border: 0; border-radius: 8px; padding: 7px 12px; background: var(--gw-accent, #2f5bd3); color: #fff; cursor: pointer; }
`;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function styles(root: ShadowRoot): void {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
  } catch {
    root.append(el("style", {}, CSS));
  }
}

function mount(script: HTMLScriptElement): void {
  const sessionUrl = script.dataset.sessionUrl;
  if (!sessionUrl) {
    console.error("gateway widget: data-session-url is required");
    return;
  }
  const gateway = (script.dataset.gateway ?? new URL(script.src).origin).replace(/\/+$/, "");
  const title = script.dataset.title ?? "Chat with us";

  const host = el("div", { "data-gateway-widget": "" });
  document.body.append(host);
  const root = host.attachShadow({ mode: "open" });
  styles(root);
  if (script.dataset.accent && /^#[0-9a-f]{3,8}$/i.test(script.dataset.accent)) host.style.setProperty("--gw-accent", script.dataset.accent);

  const launcher = el("button", { class: "launcher", type: "button", "aria-expanded": "false" }, title);
  const panel = el("section", { class: "panel", role: "dialog", "aria-label": title });
  panel.hidden = true;
  const status = el("small", {}, "connecting…");
  const header = el("header");
  header.append(el("span", {}, title), status);
  const log = el("div", { class: "log", role: "log", "aria-live": "polite" });
  const typing = el("div", { class: "typing" });
  const form = el("form");
  const input = el("input", { name: "message", "aria-label": "Your message", placeholder: "Write a message…", maxlength: "4096", autocomplete: "off" });
  const send = el("button", { class: "send", type: "submit" }, "Send");
  form.append(input, send);
  panel.append(header, log, typing, form);
  root.append(panel, launcher);

  const render = (messages: WidgetMessage[]) => {
    const nearBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    const text = (m: WidgetMessage) => (m.deleted ? "(deleted)" : (m.text ?? (m.kind === "file" ? "(a file)" : "")));
    const bubble = (m: WidgetMessage) => el("div", { class: `msg ${m.author}${m.deleted ? " deleted" : ""}`, "data-author": m.author }, text(m));
    if (messages.length === 0) log.replaceChildren(el("div", { class: "empty" }, "Send us a message and we will answer here."));
    else log.replaceChildren(...messages.map(bubble));
    typing.textContent = "";
    if (nearBottom) log.scrollTop = log.scrollHeight;
  };

  const session = new WidgetSession({
    gateway,
    sessionUrl: new URL(sessionUrl, window.location.href).toString(),
    storage: { local: window.localStorage, session: window.sessionStorage },
    onMessages: render,
    onTyping: () => {
      typing.textContent = "typing…";
    },
    onState: (state) => {
      status.textContent = state === "ready" ? "online" : state === "offline" ? "reconnecting…" : "connecting…";
    },
  });

  const toggle = (open: boolean) => {
    panel.hidden = !open;
    launcher.setAttribute("aria-expanded", String(open));
    window.sessionStorage.setItem(`gw-widget:${gateway}:open`, open ? "1" : "");
    if (open) input.focus();
  };
  launcher.addEventListener("click", () => toggle(panel.hidden));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    send.disabled = true;
    session.send(text).then(
      () => {
        input.value = "";
        send.disabled = false;
      },
      () => {
        status.textContent = "not sent, try again";
        send.disabled = false;
      },
    );
  });
  if (script.dataset.open === "true" || window.sessionStorage.getItem(`gw-widget:${gateway}:open`)) toggle(true);
  void session.start();
}

const current = document.currentScript;
if (current instanceof HTMLScriptElement) {
  const go = () => mount(current);
  if (document.body) go();
  else document.addEventListener("DOMContentLoaded", go, { once: true });
}
