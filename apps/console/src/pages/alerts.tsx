import { useState } from "react";
import type { DataOf, ItemOf } from "../api-types.js";
import { api } from "../client.js";
import { intOrUndefined, usd, when } from "../format.js";
import { MoreButton, usePages } from "../list-pages.js";
import { ActionForm, Badge, Card, ErrorBox, Field, Refresh, SecretOnce, Table, useLoad } from "../ui.js";

// Account webhooks and the balance alert (CONTRACT.md section 13, docs/decisions/0210).
type Webhook = ItemOf<"GET /console/webhooks">;
type Created = DataOf<"POST /console/webhooks">;
type Delivery = ItemOf<"GET /console/webhooks/{id}/deliveries">;
type Alerts = DataOf<"GET /console/alerts">;

const EVENTS: [Webhook["events"][number], string][] = [
  ["balance.low", "the available balance falls below the alert threshold"],
  ["budget.threshold", "a key's or instance's spend budget reaches 80 %"],
  ["budget.reached", "a spend budget is used up"],
  ["key.expiring", "an API key expires in 7 days, and again in 1 day"],
  ["ping", "the test button below"],
];

export function Alerts() {
  const webhooks = usePages<Webhook>("/console/webhooks", { limit: 50, key: (w) => w.id });
  const [secret, setSecret] = useState<{ label: string; secret: string } | null>(null);
  const [selected, setSelected] = useState<Webhook | null>(null);
  const [rowError, setRowError] = useState<unknown>(null);
  const [tested, setTested] = useState<string | null>(null);
  const [form, setForm] = useState({ url: "", description: "", events: ["balance.low", "budget.threshold", "budget.reached", "key.expiring"] as string[] });
  const toggle = (event: string) =>
    setForm({ ...form, events: form.events.includes(event) ? form.events.filter((e) => e !== event) : [...form.events, event] });

  const test = async (w: Webhook) => {
    setRowError(null);
    setTested(null);
    try {
      const sent = await api.data<{ event_id: string }>("POST", `/console/webhooks/${w.id}/test`);
      setTested(`A ping (${sent.event_id}) is on its way to ${w.url}.`);
      setSelected(w);
    } catch (err) {
      setRowError(err);
    }
  };
  const remove = async (w: Webhook) => {
    setRowError(null);
    if (!window.confirm(`Remove the webhook to ${w.url}? Its deliveries go with it.`)) return;
    try {
      await api.send("DELETE", `/console/webhooks/${w.id}`);
      if (selected?.id === w.id) setSelected(null);
      webhooks.reload();
    } catch (err) {
      setRowError(err);
    }
  };

  return (
    <>
      {secret ? <SecretOnce label={secret.label} secret={secret.secret} onDismiss={() => setSecret(null)} /> : null}
      <AlertThreshold />
      <Card title="Webhooks" actions={<Refresh load={webhooks} />}>
        <p className="muted">
          Each event is a signed POST (<code>X-Service-Signature: sha256=&lt;HMAC of the body with the webhook's secret&gt;</code>,{" "}
          <code>X-Service-Event-Id</code>), retried with backoff up to 8 times, like job callbacks.
        </p>
        <ErrorBox error={webhooks.error ?? rowError} />
        {tested ? <div className="ok">{tested}</div> : null}
        <Table
          rows={webhooks.rows}
          rowKey={(w) => w.id}
          empty="No webhooks yet: register one below."
          columns={[
            ["URL", (w) => <code className="small">{w.url}</code>],
            ["Events", (w) => w.events.join(" ")],
            ["Description", (w) => w.description ?? ""],
            ["Created", (w) => when(w.created_at)],
            [
              "",
              (w) => (
                <span className="row-actions">
                  <button className="secondary" onClick={() => setSelected(w)}>
                    Deliveries
                  </button>
                  <button className="secondary" onClick={() => test(w)}>
                    Send a test
                  </button>
                  <button className="danger" onClick={() => remove(w)}>
                    Remove
                  </button>
                </span>
              ),
            ],
          ]}
        />
        <MoreButton pages={webhooks} label="More webhooks" />
      </Card>
      {selected ? <Deliveries webhook={selected} /> : null}
      <Card title="Register a webhook">
        <ActionForm
          submit="Register webhook"
          onSubmit={async () => {
            const created = await api.data<Created>("POST", "/console/webhooks", {
              body: { url: form.url.trim(), events: form.events, ...(form.description.trim() ? { description: form.description.trim() } : {}) },
            });
            setSecret({ label: `Signing secret of the webhook to ${created.url}.`, secret: created.secret });
            webhooks.reload();
          }}
        >
          <Field label="URL" hint="HTTPS; loopback, private and link-local addresses are refused.">
            <input
              name="url"
              value={form.url}
              onChange={(e) => setForm({ ...form, url: e.target.value })}
              placeholder="https://example.com/hooks/gateway"
              required
            />
          </Field>
          <fieldset className="scopes">
            <legend>Events</legend>
            {EVENTS.map(([event, what]) => (
              <label key={event} className="check" title={what}>
                <input type="checkbox" name={`event:${event}`} checked={form.events.includes(event)} onChange={() => toggle(event)} />
                {event}
              </label>
            ))}
          </fieldset>
          <Field label="Description">
            <input name="description" value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
          </Field>
        </ActionForm>
      </Card>
    </>
  );
}

function Deliveries({ webhook }: { webhook: Webhook }) {
  const deliveries = usePages<Delivery>(`/console/webhooks/${webhook.id}/deliveries`, { limit: 20, key: (d) => d.event_id }, [webhook.id]);
  return (
    <Card title={`Deliveries to ${webhook.url}`} actions={<Refresh load={deliveries} />}>
      <ErrorBox error={deliveries.error} />
      <Table
        rows={deliveries.rows}
        rowKey={(d) => d.event_id}
        empty="Nothing sent yet."
        columns={[
          ["Event", (d) => <code>{d.event}</code>],
          ["Event id", (d) => <code className="small">{d.event_id}</code>],
          ["Status", (d) => <Badge value={d.status} />],
          ["Attempts", (d) => String(d.attempts)],
          ["Last answer", (d) => (d.last_status === null ? "—" : `HTTP ${d.last_status}`)],
          ["Created", (d) => when(d.created_at)],
        ]}
      />
      <MoreButton pages={deliveries} label="Older deliveries" />
    </Card>
  );
}

function AlertThreshold() {
  const alerts = useLoad(() => api.data<Alerts>("GET", "/console/alerts"));
  const [units, setUnits] = useState("");
  const current = alerts.data?.balance_low_units ?? null;
  return (
    <Card title="Balance alert">
      <ErrorBox error={alerts.error} />
      <p data-testid="alert-threshold">
        {alerts.data === undefined
          ? "…"
          : current === null
            ? "No balance alert."
            : `balance.low is sent once each time the available balance falls below ${usd(current)} (${current} units).`}
      </p>
      <ActionForm
        submit="Save threshold"
        onSubmit={async () => {
          const value = intOrUndefined(units);
          await api.data<Alerts>("PUT", "/console/alerts", { body: { balance_low_units: value === undefined ? null : value } });
          setUnits("");
          alerts.reload();
          return value === undefined ? "Balance alert turned off." : `Alert set below ${usd(value)}.`;
        }}
      >
        <Field label="Threshold" hint="Units of USD 0.0001 (10000 = $1.0000). Empty: no alert.">
          <input name="balance_low_units" inputMode="numeric" value={units} onChange={(e) => setUnits(e.target.value)} />
        </Field>
      </ActionForm>
    </Card>
  );
}
