import { useState } from "react";
import type { DataOf } from "../api-types.js";
import { chargedTotals, type UsageRecord } from "../charts.js";
import { api } from "../client.js";
import { toCsv, type CsvColumn } from "../csv.js";
import { usd, when } from "../format.js";
import { MoreButton, usePages } from "../list-pages.js";
import { ActionForm, Badge, Card, ErrorBox, Field, Refresh, Table } from "../ui.js";

type RequestView = DataOf<"GET /console/requests/{request_id}">;

const PAGE = 100;

const CSV_COLUMNS: CsvColumn<UsageRecord>[] = [
  ["request_id", (r) => r.id],
  ["created_at", (r) => r.created_at],
  ["instance", (r) => r.service_alias],
  ["model", (r) => r.model_alias],
  ["price_id", (r) => r.price_id],
  ["mode", (r) => r.mode],
  ["status", (r) => r.status],
  ["reserved_units", (r) => r.reserved_units],
  ["final_units", (r) => r.final_units],
  ["error_code", (r) => r.error_code],
];

/** Saves what is loaded as a CSV file (money in units of USD 0.0001, as the API gives it). */
function downloadCsv(records: UsageRecord[]) {
  const url = URL.createObjectURL(new Blob([toCsv(records, CSV_COLUMNS)], { type: "text/csv;charset=utf-8" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = `usage-${new Date().toISOString().slice(0, 10)}.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

type Mode = "managed" | "byok" | "all";

const MODES: Record<Mode, string> = {
  managed: "managed (charged to the balance)",
  byok: "bring-your-own-key (never charged)",
  all: "all",
};

export function Usage() {
  const [mode, setMode] = useState<Mode>("managed");
  const usage = usePages<UsageRecord>(`/console/services/managed-ai/usage?mode=${mode}`, { limit: PAGE, key: (r) => r.id }, [mode]);
  const rows = usage.rows;
  const totals = chargedTotals(rows);
  return (
    <>
      <Card
        title={`Usage (${rows.length} ${mode === "all" ? "" : `${mode} `}requests loaded, newest first)`}
        actions={
          <div className="row-actions">
            <select name="mode" aria-label="Records" value={mode} onChange={(e) => setMode(e.target.value as Mode)}>
              {(Object.keys(MODES) as Mode[]).map((m) => (
                <option key={m} value={m}>
                  {MODES[m]}
                </option>
              ))}
            </select>
            <button className="secondary" disabled={rows.length === 0} onClick={() => downloadCsv(rows)}>
              Export CSV
            </button>
            <Refresh load={usage} />
          </div>
        }
      >
        <ErrorBox error={usage.error} />
        <p className="muted" data-testid="usage-totals">
          Charged: <strong data-testid="charged-total">{usd(totals.units)}</strong> over {totals.records} completed managed{" "}
          {totals.records === 1 ? "request" : "requests"} of those loaded (bring-your-own-key records are never charged).
        </p>
        <Table
          rows={rows}
          rowKey={(r) => r.id}
          empty="No requests yet."
          columns={[
            ["Request", (r) => <code className="small">{r.id}</code>],
            ["When", (r) => when(r.created_at)],
            ["Mode", (r) => r.mode],
            ["Instance", (r) => r.service_alias],
            ["Model", (r) => r.model_alias],
            ["Status", (r) => <Badge value={r.status} />],
            ["Reserved", (r) => (r.mode === "byok" ? "—" : usd(r.reserved_units))],
            ["Final cost", (r) => <span data-testid="final-cost">{r.mode === "byok" ? `${usd(r.final_units)} (at your provider)` : usd(r.final_units)}</span>],
            ["Note", (r) => r.error_code ?? ""],
          ]}
        />
        <MoreButton pages={usage} label="Older requests" />
      </Card>
      <RequestLookup />
    </>
  );
}

/** The API a request came through, as its usage record says. */
function apiName(api: UsageRecord["api"]): string {
  switch (api) {
    case "chat_completions":
      return "Chat Completions (OpenAI)";
    case "messages":
      return "Messages (Anthropic)";
    case "embeddings":
      return "Embeddings";
    default:
      return "not recorded";
  }
}

/** An audit payload as name: value lines (nested values as compact JSON). */
function Fields({ data }: { data: unknown }) {
  if (!data || typeof data !== "object" || Object.keys(data).length === 0) return <span className="muted">—</span>;
  return (
    <dl className="fields">
      {Object.entries(data as Record<string, unknown>).map(([k, v]) => (
        <div key={k}>
          <dt>{k.replace(/_/g, " ")}</dt>
          <dd>{v === null ? "—" : typeof v === "object" ? <code className="small">{JSON.stringify(v)}</code> : String(v)}</dd>
        </div>
      ))}
    </dl>
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
            <div>
              <dt>API</dt>
              <dd data-testid="request-api">{view.usage ? apiName(view.usage.api) : "—"}</dd>
            </div>
          </dl>
          <h3>Audit trail</h3>
          <Table
            rows={view.audit}
            rowKey={(e) => e.event_id}
            empty="No events."
            columns={[
              ["Event", (e) => <code>{e.type}</code>],
              ["When", (e) => when(e.occurred_at)],
              ["Details", (e) => <Fields data={e.data} />],
            ]}
          />
        </div>
      ) : null}
    </Card>
  );
}
