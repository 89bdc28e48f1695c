import { api } from "../client.js";
import { when } from "../format.js";
import { Badge, Card, ErrorBox, Table, useLoad } from "../ui.js";
import { KeyGate } from "./key-gate.js";

type Job = { id: string; type: string; status: string; result: unknown; error: unknown; callback: { state: string; attempts: number; last_status: number | null }; created_at: string; updated_at: string };
type Lease = { id?: string; lease_id?: string; job_id?: string; status?: string; receiver?: string; energy?: number; duration_seconds?: number; cost_units?: number; dry_run?: boolean; created_at?: string };

export function Jobs() {
  return <KeyGate scopes="jobs:read (and tron:lease for leases)">{(key) => <JobLists apiKey={key} />}</KeyGate>;
}

function JobLists({ apiKey }: { apiKey: string }) {
  const auth = { kind: "apiKey" as const, key: apiKey };
  const jobs = useLoad(() => api.data<Job[]>("GET", "/v1/jobs", { auth }), [apiKey]);
  const leases = useLoad(() => api.data<Lease[]>("GET", "/v1/apps/tron/leases", { auth }), [apiKey]);
  return (
    <>
      <Card title="Jobs" actions={<button className="secondary" onClick={jobs.reload}>Refresh</button>}>
        <ErrorBox error={jobs.error} />
        <Table
          rows={jobs.data ?? []}
          rowKey={(j) => j.id}
          empty="No jobs."
          columns={[
            ["Job", (j) => <code className="small">{j.id}</code>],
            ["Type", (j) => j.type],
            ["Status", (j) => <Badge value={j.status} />],
            ["Callback", (j) => `${j.callback.state} (${j.callback.attempts} attempts${j.callback.last_status ? `, last ${j.callback.last_status}` : ""})`],
            ["Result / error", (j) => <span className="small mono">{JSON.stringify(j.error ?? j.result ?? null)}</span>],
            ["Updated", (j) => when(j.updated_at)],
          ]}
        />
      </Card>
      <Card title="Energy leases" actions={<button className="secondary" onClick={leases.reload}>Refresh</button>}>
        <ErrorBox error={leases.error} />
        <Table
          rows={leases.data ?? []}
          rowKey={(l) => String(l.lease_id ?? l.id)}
          empty="No leases."
          columns={[
            ["Lease", (l) => <code className="small">{l.lease_id ?? l.id}</code>],
            ["Job", (l) => <code className="small">{l.job_id ?? "—"}</code>],
            ["Status", (l) => (l.status ? <Badge value={l.status} /> : "—")],
            ["Receiver", (l) => <span className="mono small">{l.receiver ?? "—"}</span>],
            ["Energy", (l) => l.energy ?? "—"],
            ["Seconds", (l) => l.duration_seconds ?? "—"],
            ["Dry run", (l) => (l.dry_run === undefined ? "—" : l.dry_run ? "yes" : "no")],
            ["Created", (l) => when(l.created_at)],
          ]}
        />
      </Card>
    </>
  );
}
