import { useState } from "react";
import { api } from "../client.js";
import { when } from "../format.js";
import { ActionForm, Card, Field, LoadedTable, useLoad } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";

type Upstream = ItemOf<"GET /ops/ai/upstreams">;
type TestResult = DataOf<"POST /ops/ai/upstreams/{id}/test">;

export function Upstreams({ canWrite }: { canWrite: boolean }) {
  const upstreams = useLoad(() => api.data<Upstream[]>("GET", "/ops/ai/upstreams"));
  const [tests, setTests] = useState<Record<string, TestResult | string>>({});
  const [f, setF] = useState({ id: "", base_url: "", api_key: "", enabled: true });
  const test = async (u: Upstream) => {
    setTests((t) => ({ ...t, [u.id]: "testing…" }));
    try {
      const r = await api.data<TestResult>("POST", `/ops/ai/upstreams/${u.id}/test`);
      setTests((t) => ({ ...t, [u.id]: r }));
    } catch (err) {
      setTests((t) => ({ ...t, [u.id]: (err as Error).message }));
    }
  };
  const show = (r: TestResult | string | undefined) => {
    if (r === undefined) return "";
    if (typeof r === "string") return r;
    if (!r.reachable) return <span className="bad">unreachable</span>;
    return r.authenticated ? <span className="good">connected ({r.upstream_status})</span> : <span className="bad">refused the key ({r.upstream_status})</span>;
  };
  return (
    <>
      <LoadedTable
        title="Upstreams"
        load={upstreams}
        rowKey={(u) => u.id}
        empty="No upstreams yet."
        columns={[
          ["Id", (u) => <code>{u.id}</code>],
          ["Base URL", (u) => <span className="mono small">{u.base_url}</span>],
          ["Key", (u) => (u.key_configured ? "configured" : "none")],
          ["Enabled", (u) => (u.enabled ? "yes" : "no")],
          ["Version", (u) => u.version],
          ["Updated", (u) => when(u.updated_at)],
          ["Connection", (u) => <span data-testid={`test-${u.id}`}>{show(tests[u.id])}</span>],
          [
            "",
            (u) => (
              <button className="secondary" onClick={() => test(u)}>
                Test connection
              </button>
            ),
          ],
        ]}
      />
      {canWrite ? (
        <Card title="Create or update an upstream">
          <ActionForm
            submit="Save upstream"
            onSubmit={async () => {
              const saved = await api.data<DataOf<"PUT /ops/ai/upstreams/{id}">>("PUT", `/ops/ai/upstreams/${encodeURIComponent(f.id.trim())}`, {
                body: { provider: "openai", base_url: f.base_url.trim(), enabled: f.enabled, ...(f.api_key ? { api_key: f.api_key } : {}) },
              });
              setF({ ...f, api_key: "" });
              upstreams.reload();
              return `Saved ${saved.id} (version ${saved.version}).`;
            }}
          >
            <div className="row">
              <Field label="Id">
                <input name="upstream_id" value={f.id} onChange={(e) => setF({ ...f, id: e.target.value })} required />
              </Field>
              <Field label="Base URL" hint="Any OpenAI-compatible API, e.g. https://api.openai.com/v1">
                <input name="base_url" value={f.base_url} onChange={(e) => setF({ ...f, base_url: e.target.value })} required />
              </Field>
              <Field label="API key" hint="Empty keeps the stored key; stored encrypted, never shown.">
                <input name="upstream_api_key" type="password" autoComplete="off" value={f.api_key} onChange={(e) => setF({ ...f, api_key: e.target.value })} />
              </Field>
              <label className="check">
                <input type="checkbox" checked={f.enabled} onChange={(e) => setF({ ...f, enabled: e.target.checked })} /> enabled
              </label>
            </div>
          </ActionForm>
        </Card>
      ) : null}
    </>
  );
}
