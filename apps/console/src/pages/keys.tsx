import { useState } from "react";
import { api } from "../client.js";
import { budgetBody, budgetText, intOrUndefined, listOrUndefined, when } from "../format.js";
import { MoreButton, usePages } from "../list-pages.js";
import { ActionForm, BudgetFields, Card, ErrorBox, Field, Refresh, SecretOnce, Table } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";

type Key = ItemOf<"GET /console/keys">;
type KeyWithSecret = DataOf<"POST /console/keys">;

/** The scope table of spec section 5 (plus file:write); '*' allows every scope. */
export const SCOPES = [
  "ai:invoke",
  "jobs:read",
  "tron:lease",
  "push:send",
  "socialops:read",
  "socialops:write",
  "bot:send",
  "bot:session:create",
  "bot:events:read",
  "conversation:read",
  "conversation:write",
  "conversation:events:write",
  "file:read",
  "file:write",
  "*",
];

/** A key's numeric limits, each a field of the key and of its create request (null or empty: unlimited). */
const LIMITS = [
  { field: "daily_quota", label: "Daily quota", hint: "Requests per UTC day. Empty: unlimited." },
  { field: "rate_limit_per_minute", label: "Rate per minute", hint: "Empty: unlimited." },
  { field: "concurrency_limit", label: "Concurrency", hint: "Requests in flight at once. Empty: unlimited." },
] as const;

const limit = (n: number | null) => (n === null ? "unlimited" : String(n));

export function Keys() {
  const keys = usePages<Key>("/console/keys", { limit: 50, key: (k) => k.id });
  const [secret, setSecret] = useState<{ label: string; key: string } | null>(null);
  const [rowError, setRowError] = useState<unknown>(null);
  const [form, setForm] = useState({
    name: "",
    scopes: ["ai:invoke"] as string[],
    aliases: "",
    ips: "",
    daily_quota: "",
    rate_limit_per_minute: "",
    concurrency_limit: "",
    expires: "",
    budget_units: "",
    budget_period: "day",
  });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const toggleScope = (scope: string) =>
    setForm({ ...form, scopes: form.scopes.includes(scope) ? form.scopes.filter((s) => s !== scope) : [...form.scopes, scope] });

  const rotate = async (key: Key) => {
    setRowError(null);
    if (!window.confirm(`Rotate "${key.name}"? The current secret stops working at once.`)) return;
    try {
      const rotated = await api.data<KeyWithSecret>("POST", `/console/keys/${key.id}/rotate`);
      setSecret({ label: `New secret of "${rotated.name}".`, key: rotated.key });
      keys.reload();
    } catch (err) {
      setRowError(err);
    }
  };
  const changeBudget = async (key: Key) => {
    setRowError(null);
    const answer = window.prompt(
      `Spend budget of "${key.name}" in units of USD 0.0001 per ${key.budget?.period ?? "day"} (UTC). Empty: no budget.`,
      key.budget ? String(key.budget.limit_units) : "",
    );
    if (answer === null) return;
    const units = intOrUndefined(answer);
    try {
      await api.send("PATCH", `/console/keys/${key.id}`, {
        body: units === undefined ? { budget_units: null, budget_period: null } : { budget_units: units, budget_period: key.budget?.period ?? "day" },
      });
      keys.reload();
    } catch (err) {
      setRowError(err);
    }
  };
  const revoke = async (key: Key) => {
    setRowError(null);
    if (!window.confirm(`Revoke "${key.name}"? It stops working at once.`)) return;
    try {
      await api.send("DELETE", `/console/keys/${key.id}`);
      keys.reload();
    } catch (err) {
      setRowError(err);
    }
  };

  return (
    <>
      {secret ? <SecretOnce label={secret.label} secret={secret.key} onDismiss={() => setSecret(null)} /> : null}
      <Card title="API keys" actions={<Refresh load={keys} />}>
        <ErrorBox error={keys.error ?? rowError} />
        <Table
          rows={keys.rows}
          rowKey={(k) => k.id}
          empty="No keys yet: create one below."
          columns={[
            ["Name", (k) => k.name],
            ["Prefix", (k) => <code>{k.prefix}…</code>],
            ["Scopes", (k) => (k.scopes.length ? k.scopes.join(" ") : <em>none (denied everywhere)</em>)],
            ["Instances", (k) => k.service_aliases?.join(" ") ?? "any"],
            ["Addresses", (k) => k.allowed_ips?.join(" ") ?? "any"],
            ["Per day / minute / at once", (k) => LIMITS.map(({ field }) => limit(k[field])).join(" / ")],
            ["Budget", (k) => <span className="small">{budgetText(k.budget)}</span>],
            ["Expires", (k) => when(k.expires_at)],
            ["Created", (k) => when(k.created_at)],
            [
              "",
              (k) => (
                <span className="row-actions">
                  <button className="secondary" onClick={() => changeBudget(k)}>
                    Budget
                  </button>
                  <button className="secondary" onClick={() => rotate(k)}>
                    Rotate
                  </button>
                  <button className="danger" onClick={() => revoke(k)}>
                    Revoke
                  </button>
                </span>
              ),
            ],
          ]}
        />
        <MoreButton pages={keys} label="More keys" />
      </Card>
      <Card title="Create a key">
        <ActionForm
          submit="Create key"
          onSubmit={async () => {
            const body = {
              ...(form.name.trim() ? { name: form.name.trim() } : {}),
              scopes: form.scopes,
              ...(listOrUndefined(form.aliases) ? { service_aliases: listOrUndefined(form.aliases) } : {}),
              ...(listOrUndefined(form.ips) ? { allowed_ips: listOrUndefined(form.ips) } : {}),
              ...Object.fromEntries(
                LIMITS.flatMap(({ field }) => {
                  const n = intOrUndefined(form[field]);
                  return n === undefined ? [] : [[field, n]];
                }),
              ),
              ...(form.expires ? { expires_at: new Date(form.expires).toISOString() } : {}),
              ...budgetBody(form),
            };
            const created = await api.data<KeyWithSecret>("POST", "/console/keys", { body });
            setSecret({ label: `Key "${created.name}" created.`, key: created.key });
            keys.reload();
          }}
        >
          <Field label="Name">
            <input name="name" value={form.name} onChange={set("name")} placeholder="production backend" />
          </Field>
          <fieldset className="scopes">
            <legend>Scopes (none: the key is denied everywhere)</legend>
            {SCOPES.map((scope) => (
              <label key={scope} className="check">
                <input type="checkbox" name={`scope:${scope}`} checked={form.scopes.includes(scope)} onChange={() => toggleScope(scope)} />
                {scope === "*" ? "* (every scope)" : scope}
              </label>
            ))}
          </fieldset>
          <Field label="Instances" hint="<service_id>:<alias>, e.g. ai-model:demo; separated by spaces or commas. Empty: any instance.">
            <input name="service_aliases" value={form.aliases} onChange={set("aliases")} />
          </Field>
          <Field label="Allowed addresses" hint="IP addresses or CIDRs. Empty: any address.">
            <input name="allowed_ips" value={form.ips} onChange={set("ips")} />
          </Field>
          <div className="row">
            {LIMITS.map(({ field, label, hint }) => (
              <Field key={field} label={label} hint={hint}>
                <input name={field} inputMode="numeric" value={form[field]} onChange={set(field)} />
              </Field>
            ))}
            <Field label="Expires" hint="Your local time. Empty: never.">
              <input name="expires_at" type="datetime-local" value={form.expires} onChange={set("expires")} />
            </Field>
          </div>
          <BudgetFields form={form} set={set} hint="Units of USD 0.0001 per period; metered calls past it get 409. Empty: no budget." />
        </ActionForm>
      </Card>
    </>
  );
}
