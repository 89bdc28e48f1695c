import { useState } from "react";
import { api } from "../client.js";
import { budgetBody, budgetText, intOrUndefined, when } from "../format.js";
import { ActionForm, Badge, BudgetFields, Card, ErrorBox, Field, LoadedTable, Refresh, Select, Table, useLoad } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";

type Instance = ItemOf<"GET /console/services">;
type Account = ItemOf<"GET /console/connected-accounts">;
type Kind = "managed" | "byok" | "push" | "socialops";

/** A config as short text; secrets arrive from the API as "[redacted]" and stay that way. */
function summary(config: Record<string, unknown>): string {
  return Object.entries(config)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : String(v)}`)
    .join(" · ");
}

export function Instances() {
  const instances = useLoad(() => api.data<Instance[]>("GET", "/console/services"));
  return (
    <>
      <LoadedTable
        title="Instances"
        load={instances}
        rowKey={(i) => i.id}
        empty="No instances yet."
        columns={[
          ["Instance", (i) => <code>{`${i.service_id}:${i.alias}`}</code>],
          ["Status", (i) => <Badge value={i.status} />],
          ["Configuration", (i) => <span className="small">{summary(i.config)}</span>],
          ["Budget", (i) => (i.service_id === "socialops" ? "—" : <span className="small">{budgetText(i.budget)}</span>)],
          ["Created", (i) => when(i.created_at)],
        ]}
      />
      <CreateInstance onCreated={instances.reload} />
      <ConnectedAccounts />
    </>
  );
}

function CreateInstance({ onCreated }: { onCreated: () => void }) {
  const [kind, setKind] = useState<Kind>("managed");
  const [f, setF] = useState({
    alias: "",
    status: "active",
    default_model: "",
    models: "",
    max_tokens: "",
    max_cost: "",
    byok_model: "",
    base_url: "https://api.openai.com/v1",
    api_key: "",
    account: "",
    price_in: "",
    price_out: "",
    budget_units: "",
    budget_period: "day",
    target_id: "main",
    target_type: "webhook",
    url: "",
    secret: "",
    chat_id: "",
  });
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });

  const body = () => {
    const base = { alias: f.alias.trim(), status: f.status };
    const limits = {
      ...(intOrUndefined(f.max_tokens) !== undefined ? { max_tokens_per_request: intOrUndefined(f.max_tokens) } : {}),
      ...(f.max_cost.trim() ? { max_cost_per_request: Number(f.max_cost) } : {}),
    };
    const budget = budgetBody(f);
    switch (kind) {
      case "managed":
        return {
          service_id: "ai-model",
          ...base,
          config: {
            mode: "managed",
            default_model: f.default_model.trim(),
            ...(f.models.trim() ? { models: f.models.split(/[\s,]+/).filter(Boolean) } : {}),
            ...limits,
            ...budget,
          },
        };
      case "byok":
        return {
          service_id: "ai-model",
          ...base,
          ...(f.account ? { connected_account_id: f.account } : {}),
          config: {
            mode: "byok",
            provider: "openai",
            base_url: f.base_url.trim(),
            default_model: f.byok_model.trim(),
            ...(f.account ? {} : { api_key: f.api_key }),
            ...(f.price_in.trim() || f.price_out.trim()
              ? { pricing: { input_units_per_mtok: intOrUndefined(f.price_in) ?? 0, output_units_per_mtok: intOrUndefined(f.price_out) ?? 0 } }
              : {}),
            ...limits,
            ...budget,
          },
        };
      case "push": {
        const target =
          f.target_type === "webhook"
            ? { id: f.target_id, type: "webhook", url: f.url, ...(f.secret ? { secret: f.secret } : {}), enabled: true }
            : {
                id: f.target_id,
                type: "telegram",
                chat_id: f.chat_id,
                ...(f.account ? { connected_account_id: f.account } : { bot_token: f.secret }),
                enabled: true,
              };
        return { service_id: "webhook-push", ...base, config: { targets: [target], ...budget } };
      }
      case "socialops":
        return { service_id: "socialops", ...base, config: {} };
    }
  };

  return (
    <Card title="Create or update an instance">
      <div className="tabs">
        {(
          [
            ["managed", "Managed AI"],
            ["byok", "AI with your own key"],
            ["push", "Push"],
            ["socialops", "SocialOps"],
          ] as const
        ).map(([k, label]) => (
          <button key={k} type="button" className={kind === k ? "active" : "secondary"} onClick={() => setKind(k)}>
            {label}
          </button>
        ))}
      </div>
      <ActionForm
        submit="Save instance"
        onSubmit={async () => {
          const saved = await api.data<DataOf<"POST /console/services">>("POST", "/console/services", { body: body() });
          // Secrets typed into the form are not kept once saved.
          setF((prev) => ({ ...prev, api_key: "", secret: "" }));
          onCreated();
          return `Saved ${saved.service_id}:${saved.alias}.`;
        }}
      >
        <div className="row">
          <Field label="Alias" hint="Letters, digits, - and _. The same alias again updates the instance.">
            <input name="alias" value={f.alias} onChange={set("alias")} required />
          </Field>
          <Field label="Status">
            <Select name="status" value={f.status} onChange={set("status")} options={["active", "disabled"]} />
          </Field>
        </div>
        {kind === "managed" ? (
          <div className="row">
            <Field label="Default model" hint="A model alias from Prices.">
              <input name="default_model" value={f.default_model} onChange={set("default_model")} required />
            </Field>
            <Field label="Models served" hint="Aliases; empty: every enabled model.">
              <input name="models" value={f.models} onChange={set("models")} />
            </Field>
          </div>
        ) : null}
        {kind === "byok" ? (
          <>
            <div className="row">
              <Field label="Provider base URL" hint="An OpenAI-compatible API.">
                <input name="base_url" value={f.base_url} onChange={set("base_url")} required />
              </Field>
              <Field label="Default model" hint="The provider's model name.">
                <input name="byok_model" value={f.byok_model} onChange={set("byok_model")} required />
              </Field>
              <AccountPicker value={f.account} onChange={(v) => setF({ ...f, account: v })} />
              {f.account ? null : (
                <Field label="Provider API key" hint="Stored encrypted; never shown again.">
                  <input name="api_key" type="password" autoComplete="off" value={f.api_key} onChange={set("api_key")} />
                </Field>
              )}
            </div>
            <div className="row">
              <Field label="Your input price" hint="Units of USD 0.0001 per million tokens (for the cost headers only).">
                <input name="price_in" inputMode="numeric" value={f.price_in} onChange={set("price_in")} />
              </Field>
              <Field label="Your output price">
                <input name="price_out" inputMode="numeric" value={f.price_out} onChange={set("price_out")} />
              </Field>
            </div>
          </>
        ) : null}
        {kind === "managed" || kind === "byok" ? (
          <div className="row">
            <Field label="Max tokens per request" hint="Empty: the model's limit.">
              <input name="max_tokens_per_request" inputMode="numeric" value={f.max_tokens} onChange={set("max_tokens")} />
            </Field>
            <Field label="Max cost per request (USD)" hint="Empty: no cap.">
              <input name="max_cost_per_request" inputMode="decimal" value={f.max_cost} onChange={set("max_cost")} />
            </Field>
          </div>
        ) : null}
        {kind !== "socialops" ? <BudgetFields form={f} set={set} hint="Units of USD 0.0001 per period, all keys together. Empty: no budget." /> : null}
        {kind === "push" ? (
          <div className="row">
            <Field label="Target id">
              <input name="target_id" value={f.target_id} onChange={set("target_id")} />
            </Field>
            <Field label="Target type">
              <Select name="target_type" value={f.target_type} onChange={set("target_type")} options={["webhook", "telegram"]} />
            </Field>
            {f.target_type === "webhook" ? (
              <>
                <Field label="URL">
                  <input name="url" value={f.url} onChange={set("url")} placeholder="https://example.com/hook" />
                </Field>
                <Field label="Signing secret" hint="Optional; signs X-Service-Signature. Never shown again.">
                  <input name="secret" type="password" autoComplete="off" value={f.secret} onChange={set("secret")} />
                </Field>
              </>
            ) : (
              <>
                <Field label="Chat id">
                  <input name="chat_id" value={f.chat_id} onChange={set("chat_id")} />
                </Field>
                <AccountPicker value={f.account} onChange={(v) => setF({ ...f, account: v })} />
                {f.account ? null : (
                  <Field label="Bot token" hint="Never shown again.">
                    <input name="secret" type="password" autoComplete="off" value={f.secret} onChange={set("secret")} />
                  </Field>
                )}
              </>
            )}
          </div>
        ) : null}
        {kind === "socialops" ? <p className="muted">A SocialOps inbox; providers post to /v1/apps/socialops/&lt;alias&gt;/webhook/&lt;provider&gt;.</p> : null}
      </ActionForm>
    </Card>
  );
}

function AccountPicker({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  const accounts = useLoad(() => api.data<Account[]>("GET", "/console/connected-accounts"));
  return (
    <Field label="Connected account" hint={accounts.error ? "Connected accounts are not available on this gateway." : "Or a secret typed here."}>
      <select value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">(none: type a secret)</option>
        {(accounts.data ?? []).map((a) => (
          <option key={a.id} value={a.id}>
            {a.name} ({a.provider})
          </option>
        ))}
      </select>
    </Field>
  );
}

function ConnectedAccounts() {
  const accounts = useLoad(() => api.data<Account[]>("GET", "/console/connected-accounts"));
  const [f, setF] = useState({ provider: "openai", name: "", secret: "" });
  const [rowError, setRowError] = useState<unknown>(null);
  const remove = async (a: Account) => {
    if (!window.confirm(`Delete the connected account "${a.name}"?`)) return;
    try {
      await api.send("DELETE", `/console/connected-accounts/${a.id}`);
      accounts.reload();
    } catch (err) {
      setRowError(err);
    }
  };
  return (
    <Card title="Connected accounts" actions={<Refresh load={accounts} />}>
      <ErrorBox error={accounts.error ?? rowError} />
      {accounts.error ? null : (
        <>
          <Table
            rows={accounts.data ?? []}
            rowKey={(a) => a.id}
            empty="No connected accounts."
            columns={[
              ["Name", (a) => a.name],
              ["Provider", (a) => a.provider],
              ["Id", (a) => <code>{a.id}</code>],
              ["Created", (a) => when(a.created_at)],
              [
                "",
                (a) => (
                  <button className="danger" onClick={() => remove(a)}>
                    Delete
                  </button>
                ),
              ],
            ]}
          />
          <ActionForm
            submit="Connect account"
            onSubmit={async () => {
              const created = await api.data<DataOf<"POST /console/connected-accounts">>("POST", "/console/connected-accounts", { body: f });
              setF({ ...f, name: "", secret: "" });
              accounts.reload();
              return `Connected ${created.name}.`;
            }}
          >
            <div className="row">
              <Field label="Provider">
                <Select value={f.provider} onChange={(e) => setF({ ...f, provider: e.target.value })} options={["openai", "telegram"]} />
              </Field>
              <Field label="Name">
                <input value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} required />
              </Field>
              <Field label="Secret" hint="Stored encrypted; never shown again.">
                <input type="password" autoComplete="off" value={f.secret} onChange={(e) => setF({ ...f, secret: e.target.value })} required />
              </Field>
            </div>
          </ActionForm>
        </>
      )}
    </Card>
  );
}
