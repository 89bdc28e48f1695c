import { useState } from "react";
import type { DataOf } from "../api-types.js";
import type { UsageRecord } from "../charts.js";
import { api } from "../client.js";
import { toCsv, type CsvColumn } from "../csv.js";
import { usd, when } from "../format.js";
import { ActionForm, Badge, Card, ErrorBox, Field, Table, useLoad } from "../ui.js";

type RequestView = DataOf<"GET /console/requests/{request_id}">;

const PAGE = 100;

const CSV_COLUMNS: CsvColumn<UsageRecord>[] = [
  ["request_id", (r) => r.id],
  ["created_at", (r) => r.created_at],
  ["instance", (r) => r.service_alias],
  ["model", (r) => r.model_alias],
  ["price_id", (r) => r.price_id],
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

export function Usage() {
  const usage = useLoad(() => api.data<UsageRecord[]>("GET", `/console/services/managed-ai/usage?limit=${PAGE}`));
  const [older, setOlder] = useState<UsageRecord[]>([]);
  const [olderError, setOlderError] = useState<unknown>(null);
  const [end, setEnd] = useState(false);
  const rows = [...(usage.data ?? []), ...older];
  const hasMore = !end && (older.length > 0 ? older.length % PAGE === 0 : (usage.data?.length ?? 0) === PAGE);
  const more = async () => {
    setOlderError(null);
    try {
      const page = await api.data<UsageRecord[]>(
        "GET",
        `/console/services/managed-ai/usage?limit=${PAGE}&before=${encodeURIComponent(rows[rows.length - 1]!.id)}`,
      );
      setOlder([...older, ...page]);
      if (page.length < PAGE) setEnd(true);
    } catch (err) {
      setOlderError(err);
    }
  };
  return (
    <>
      <Card
        title={`Usage (${rows.length} managed requests loaded, newest first)`}
        actions={
          <div className="row-actions">
            <button className="secondary" disabled={rows.length === 0} onClick={() => downloadCsv(rows)}>
              Export CSV
            </button>
            <button
              className="secondary"
              onClick={() => {
                setOlder([]);
                setEnd(false);
                usage.reload();
              }}
            >
              Refresh
            </button>
          </div>
        }
      >
        <ErrorBox error={usage.error ?? olderError} />
        <Table
          rows={rows}
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
        {hasMore ? (
          <button className="secondary" onClick={() => void more()}>
            Older requests
          </button>
        ) : null}
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
