import { useState } from "react";
import { api } from "../client.js";
import { intOrUndefined, when } from "../format.js";
import { ActionForm, Card, Field, LoadedTable, useLoad } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";

type Offer = ItemOf<"GET /ops/ai/discounts">;

export function Discounts({ canWrite }: { canWrite: boolean }) {
  const offers = useLoad(() => api.data<Offer[]>("GET", "/ops/ai/discounts"));
  const [f, setF] = useState({ tenant_id: "", model_alias: "", bps: "", expires: "" });
  return (
    <>
      <LoadedTable
        title="Discounts"
        load={offers}
        rowKey={(o) => o.id}
        empty="No discounts."
        columns={[
          ["Tenant", (o) => <code className="small">{o.tenant_id}</code>],
          ["Model", (o) => o.model_alias],
          ["Discount", (o) => `${(o.discount_bps / 100).toFixed(2)} % (${o.discount_bps} bps)`],
          ["Expires", (o) => when(o.expires_at)],
          ["Version", (o) => o.version],
          ["Updated", (o) => when(o.updated_at)],
        ]}
      />
      {canWrite ? (
        <Card title="Set a discount (one per tenant and model, replaced in place)">
          <ActionForm
            submit="Save discount"
            onSubmit={async () => {
              const saved = await api.data<DataOf<"PUT /ops/ai/discounts">>("PUT", "/ops/ai/discounts", {
                body: {
                  tenant_id: f.tenant_id.trim(),
                  model_alias: f.model_alias.trim(),
                  discount_bps: intOrUndefined(f.bps) ?? Number.NaN,
                  ...(f.expires ? { expires_at: new Date(f.expires).toISOString() } : {}),
                },
              });
              offers.reload();
              return `Saved (version ${saved.version}).`;
            }}
          >
            <div className="row">
              <Field label="Tenant id" hint="From Tenants.">
                <input value={f.tenant_id} onChange={(e) => setF({ ...f, tenant_id: e.target.value })} required />
              </Field>
              <Field label="Model alias">
                <input value={f.model_alias} onChange={(e) => setF({ ...f, model_alias: e.target.value })} required />
              </Field>
              <Field label="Discount (bps)" hint="0..10000; 2500 = 25 %.">
                <input inputMode="numeric" value={f.bps} onChange={(e) => setF({ ...f, bps: e.target.value })} required />
              </Field>
              <Field label="Expires" hint="Your local time. Empty: never.">
                <input type="datetime-local" value={f.expires} onChange={(e) => setF({ ...f, expires: e.target.value })} />
              </Field>
            </div>
          </ActionForm>
        </Card>
      ) : null}
    </>
  );
}
