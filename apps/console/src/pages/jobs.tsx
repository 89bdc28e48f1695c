import { when } from "../format.js";
import { MoreButton, usePages } from "../list-pages.js";
import { Badge, Card, ErrorBox, Refresh, Table } from "../ui.js";
import { KeyGate } from "./key-gate.js";
import type { ItemOf } from "../api-types.js";

type Job = ItemOf<"GET /v1/jobs">;
type Lease = ItemOf<"GET /v1/apps/tron/leases">;

export function Jobs() {
  return <KeyGate scopes="jobs:read (and tron:lease for leases)">{(key) => <JobLists apiKey={key} />}</KeyGate>;
}

function JobLists({ apiKey }: { apiKey: string }) {
  const auth = { kind: "apiKey" as const, key: apiKey };
  const jobs = usePages<Job>("/v1/jobs", { limit: 50, key: (j) => j.id, auth }, [apiKey]);
  const leases = usePages<Lease>("/v1/apps/tron/leases", { limit: 50, key: (l) => l.id, auth }, [apiKey]);
  return (
    <>
      <Card title="Jobs" actions={<Refresh load={jobs} />}>
        <ErrorBox error={jobs.error} />
        <Table
          rows={jobs.rows}
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
        <MoreButton pages={jobs} label="Older jobs" />
      </Card>
      <Card title="Energy leases" actions={<Refresh load={leases} />}>
        <ErrorBox error={leases.error} />
        <Table
          rows={leases.rows}
          rowKey={(l) => l.id}
          empty="No leases."
          columns={[
            ["Lease", (l) => <code className="small">{l.id}</code>],
            ["Job", (l) => <code className="small">{l.job_id}</code>],
            ["Status", (l) => <Badge value={l.status} />],
            ["Receiver", (l) => <span className="mono small">{l.receiver}</span>],
            ["Energy", (l) => l.energy],
            ["Seconds", (l) => l.duration_seconds],
            ["Dry run", (l) => (l.dry_run ? "yes" : "no")],
            ["Created", (l) => when(l.created_at)],
          ]}
        />
        <MoreButton pages={leases} label="Older leases" />
      </Card>
    </>
  );
}
