import { useState } from "react";
import { api } from "../client.js";
import { usd, when } from "../format.js";
import { ActionForm, Badge, Card, ErrorBox, Field, Refresh, Table, useLoad } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";

type OpsRecord = ItemOf<"GET /ops/ai/requests">;

/** A record an operator may release or capture: in review, or reserved past its hold's expiry (CONTRACT §6). */
const releasable = (r: OpsRecord, now: number) =>
  r.status === "review" || (r.status === "reserved" && r.hold_expires_at !== null && Date.parse(r.hold_expires_at) <= now);

export function Review({ canWrite }: { canWrite: boolean }) {
  const records = useLoad(() => api.data<OpsRecord[]>("GET", "/ops/ai/requests"));
  const [showAll, setShowAll] = useState(false);
  const [releasing, setReleasing] = useState<OpsRecord | null>(null);
  const [capturing, setCapturing] = useState<OpsRecord | null>(null);
  const [reason, setReason] = useState("");
  const [units, setUnits] = useState("");
  const [done, setDone] = useState<string | null>(null);
  const now = Date.now();
  const rows = (records.data ?? []).filter((r) => showAll || releasable(r, now) || r.status === "reserved");
  return (
    <>
      <Card
        title={showAll ? "Requests (latest 200 of every tenant)" : "Requests to review"}
        actions={
          <span className="row-actions">
            <label className="check">
              <input type="checkbox" checked={showAll} onChange={(e) => setShowAll(e.target.checked)} /> show every request
            </label>
            <Refresh load={records} />
          </span>
        }
      >
        <ErrorBox error={records.error} />
        {done ? <div className="ok">{done}</div> : null}
        <Table
          rows={rows}
          rowKey={(r) => r.id}
          empty="Nothing waits for review."
          columns={[
            ["Request", (r) => <code className="small">{r.id}</code>],
            ["Tenant", (r) => <code className="small">{r.tenant_id}</code>],
            ["Model", (r) => r.model_alias],
            ["Status", (r) => <Badge value={r.status} />],
            ["Note", (r) => r.error_code ?? ""],
            ["Held", (r) => usd(r.reserved_units)],
            ["Hold expires", (r) => when(r.hold_expires_at)],
            ["Final / refunded", (r) => `${usd(r.final_units)} / ${usd(r.refunded_units)}`],
            ["Created", (r) => when(r.created_at)],
            [
              "",
              (r) =>
                canWrite && releasable(r, now) ? (
                  <span className="row-actions">
                    <button
                      className="secondary"
                      onClick={() => {
                        setReleasing(r);
                        setCapturing(null);
                        setReason("");
                        setDone(null);
                      }}
                    >
                      Release…
                    </button>
                    <button
                      className="secondary"
                      onClick={() => {
                        setCapturing(r);
                        setReleasing(null);
                        setReason("");
                        setUnits("");
                        setDone(null);
                      }}
                    >
                      Capture…
                    </button>
                  </span>
                ) : r.status === "reserved" ? (
                  <span className="muted small">hold not expired</span>
                ) : null,
            ],
          ]}
        />
      </Card>
      {releasing ? (
        <Card title={`Release ${releasing.id}`}>
          <p>
            The hold of {usd(releasing.reserved_units)} goes back to tenant <code>{releasing.tenant_id}</code> and the request ends as failed. The reason is
            kept in the audit trail.
          </p>
          <ActionForm
            submit="Release and refund"
            onSubmit={async () => {
              if (!reason.trim()) throw new Error("A reason is required.");
              const res = await api.data<DataOf<"POST /ops/ai/requests/{id}/release">>("POST", `/ops/ai/requests/${releasing.id}/release`, {
                body: { reason: reason.trim() },
              });
              setReleasing(null);
              setDone(`Released ${res.id}: refunded ${usd(res.refunded)}.`);
              records.reload();
            }}
          >
            <Field label="Reason (required)">
              <input name="release_reason" value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={240} />
            </Field>
          </ActionForm>
        </Card>
      ) : null}
      {capturing ? (
        <Card title={`Capture ${capturing.id}`}>
          <p>
            The units you enter (at most the {capturing.reserved_units} units held, {usd(capturing.reserved_units)}) are charged to tenant{" "}
            <code>{capturing.tenant_id}</code>, the rest of the hold goes back, and the request ends as completed. The reason is kept in the audit trail.
          </p>
          <ActionForm
            submit="Capture and charge"
            onSubmit={async () => {
              if (!/^\d+$/.test(units.trim())) throw new Error("Units must be a whole number (units of USD 0.0001).");
              if (!reason.trim()) throw new Error("A reason is required.");
              const res = await api.data<DataOf<"POST /ops/ai/requests/{id}/capture">>("POST", `/ops/ai/requests/${capturing.id}/capture`, {
                body: { units: Number(units.trim()), reason: reason.trim() },
              });
              setCapturing(null);
              setDone(`Captured ${res.id}: charged ${usd(res.final_units)}, refunded ${usd(res.refunded)}.`);
              records.reload();
            }}
          >
            <Field label="Units to charge (USD 0.0001 each)">
              <input name="capture_units" inputMode="numeric" value={units} onChange={(e) => setUnits(e.target.value)} required />
            </Field>
            <Field label="Reason (required)">
              <input name="capture_reason" value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={240} />
            </Field>
          </ActionForm>
        </Card>
      ) : null}
    </>
  );
}
