import { useState } from "react";
import { api } from "../client.js";
import { intOrUndefined, usd, when } from "../format.js";
import { ActionForm, Card, ErrorBox, Field, Refresh, Select, Table, useLoad } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";

type User = ItemOf<"GET /ops/users">;
type TenantBalance = DataOf<"GET /ops/ledger/tenants/{tenant_id}">;

/** Tenants and their users, balances and credits, and platform roles. */
export function Tenants({ canWrite }: { canWrite: boolean }) {
  const [filter, setFilter] = useState("");
  const users = useLoad(() => api.data<User[]>("GET", `/ops/users${filter ? `?email=${encodeURIComponent(filter)}` : ""}`), [filter]);
  const [tenant, setTenant] = useState("");
  return (
    <>
      <Card title="Users and tenants" actions={<Refresh load={users} />}>
        <Field label="Filter by email">
          <input value={filter} onChange={(e) => setFilter(e.target.value.trim())} />
        </Field>
        <ErrorBox error={users.error} />
        <Table
          rows={users.data ?? []}
          rowKey={(u) => u.id}
          empty="No users."
          columns={[
            ["Email", (u) => u.email],
            ["Tenant", (u) => `${u.tenant_name}`],
            ["Tenant id", (u) => <code className="small">{u.tenant_id}</code>],
            ["Tenant role", (u) => u.tenant_role],
            ["Platform role", (u) => u.platform_role ?? "—"],
            ["User id", (u) => <code className="small">{u.id}</code>],
            ["Since", (u) => when(u.created_at)],
            [
              "",
              (u) => (
                <button className="secondary" onClick={() => setTenant(u.tenant_id)}>
                  Balance
                </button>
              ),
            ],
          ]}
        />
      </Card>
      <Credits tenant={tenant} setTenant={setTenant} canWrite={canWrite} />
      {canWrite ? <Roles onChanged={users.reload} /> : null}
    </>
  );
}

function Credits({ tenant, setTenant, canWrite }: { tenant: string; setTenant: (t: string) => void; canWrite: boolean }) {
  const balance = useLoad(
    () => (tenant ? api.data<TenantBalance>("GET", `/ops/ledger/tenants/${encodeURIComponent(tenant)}`) : Promise.resolve(null)),
    [tenant],
  );
  const [units, setUnits] = useState("");
  const [reason, setReason] = useState("");
  const [idem, setIdem] = useState(() => crypto.randomUUID());
  return (
    <Card title="Tenant balance and credits">
      <Field label="Tenant id">
        <input name="credit_tenant" value={tenant} onChange={(e) => setTenant(e.target.value.trim())} />
      </Field>
      <ErrorBox error={balance.error} />
      {balance.data ? (
        <dl className="stats">
          <div>
            <dt>Available</dt>
            <dd>{usd(balance.data.available_units)}</dd>
          </div>
          <div>
            <dt>Reserved</dt>
            <dd>{usd(balance.data.reserved_units)}</dd>
          </div>
        </dl>
      ) : null}
      {canWrite && tenant ? (
        <ActionForm
          submit="Credit"
          onSubmit={async () => {
            const res = await api.data<DataOf<"POST /ops/ledger/tenants/{tenant_id}/credits">>(
              "POST",
              `/ops/ledger/tenants/${encodeURIComponent(tenant)}/credits`,
              {
                body: { units: intOrUndefined(units) ?? Number.NaN, reason: reason.trim() },
                headers: { "Idempotency-Key": idem },
              },
            );
            // A new key for the next credit; a retry of this one (same key) would credit once.
            setIdem(crypto.randomUUID());
            balance.reload();
            return `Credited: available now ${usd(res.available_units)} (entry ${res.entry_id}).`;
          }}
        >
          <div className="row">
            <Field label="Units" hint="Units of USD 0.0001: 100000 = $10.">
              <input name="credit_units" inputMode="numeric" value={units} onChange={(e) => setUnits(e.target.value)} required />
            </Field>
            <Field label="Reason (required)">
              <input name="credit_reason" value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={240} />
            </Field>
          </div>
        </ActionForm>
      ) : null}
    </Card>
  );
}

function Roles({ onChanged }: { onChanged: () => void }) {
  const [userId, setUserId] = useState("");
  const [role, setRole] = useState("none");
  return (
    <Card title="Platform roles">
      <ActionForm
        submit="Set role"
        onSubmit={async () => {
          const res = await api.data<DataOf<"PUT /ops/users/{id}/platform-role">>("PUT", `/ops/users/${encodeURIComponent(userId.trim())}/platform-role`, {
            body: { role: role === "none" ? null : role },
          });
          onChanged();
          return `${res.user_id} is now ${res.platform_role ?? "without a platform role"}.`;
        }}
      >
        <div className="row">
          <Field label="User id" hint="From the table above.">
            <input value={userId} onChange={(e) => setUserId(e.target.value)} required />
          </Field>
          <Field label="Role" hint="platform_admin: read and write; admin and finance: read only.">
            <Select value={role} onChange={(e) => setRole(e.target.value)} options={["none", "platform_admin", "admin", "finance"]} />
          </Field>
        </div>
      </ActionForm>
    </Card>
  );
}
