import { useState } from "react";
import type { UsageRecord } from "../charts.js";
import { api } from "../client.js";
import { usd, when } from "../format.js";
import { ActionForm, Badge, Card, ErrorBox, Field, Table, useLoad } from "../ui.js";

type RequestView = {
  request_id: string;
  key: { id: string; name: string; prefix: string } | null;
  usage: UsageRecord | null;
  audit: { type: string; occurred_at?: string; data?: unknown; [k: string]: unknown }[];
};

export function Usage() {
  const usage = useLoad(() => api.data<UsageRecord[]>("GET", "/console/services/managed-ai/usage"));
  return (
    <>
      <Card title="Usage (latest 100 managed requests)" actions={<button className="secondary" onClick={usage.reload}>Refresh</button>}>
        <ErrorBox error={usage.error} />
        <Table
          rows={usage.data ?? []}
          rowKey={(r) => r.id}
          empty="No requests yet."
          columns={[
            ["Request", (r) => <code className="small">{r.id}</code>],
            ["When", (r) => when(r.created_at)],
            ["Instance", (r) => r.service_alias],
            ["Model", (r) => r.model_alias],
            ["Status", (r) => <Badge value={r.status} />],
            ["Reserved", (r) => usd(r.reserved_units)],
            ["Final cost", (r) => <span data-testid="final-cost">{usd(r.final_units)}</span>],
            ["Note", (r) => r.error_code ?? ""],
          ]}
        />
      </Card>
      <RequestLookup />
    </>
  );
}

function RequestLookup() {
  const [id, setId] = useState("");
  const [view, setView] = useState<RequestView | null>(null);
  return (
    <Card title="Look up a request by its X-Request-ID">
      <ActionForm
        submit="Look up"
        onSubmit={async () => {
          setView(null);
          setView(await api.data<RequestView>("GET", `/console/requests/${encodeURIComponent(id.trim())}`));
        }}
      >
        <Field label="X-Request-ID" hint="Every answer of the gateway carries it, errors included.">
          <input name="request_id" value={id} onChange={(e) => setId(e.target.value)} required />
        </Field>
      </ActionForm>
      {view ? (
        <div className="request-view" data-testid="request-view">
          <dl className="stats">
            <div>
              <dt>Key</dt>
              <dd>{view.key ? `${view.key.name} (${view.key.prefix}…)` : "—"}</dd>
            </div>
            <div>
              <dt>Status</dt>
              <dd>{view.usage ? <Badge value={view.usage.status} /> : "no usage record (refused before metering)"}</dd>
            </div>
            <div>
              <dt>Final cost</dt>
              <dd>{usd(view.usage?.final_units)}</dd>
            </div>
          </dl>
          <h3>Audit trail</h3>
          <Table
            rows={view.audit}
            rowKey={(e) => `${e.type}-${String(e.id ?? e.occurred_at ?? Math.random())}`}
            empty="No events."
            columns={[
              ["Event", (e) => <code>{e.type}</code>],
              ["When", (e) => when((e.occurred_at as string | undefined) ?? (e.created_at as string | undefined))],
              ["Details", (e) => <span className="small mono">{JSON.stringify(e.data ?? {})}</span>],
            ]}
          />
        </div>
      ) : null}
    </Card>
  );
}
