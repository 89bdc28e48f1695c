import { api } from "../client.js";
import { usd } from "../format.js";
import { LoadedTable, useLoad } from "../ui.js";
import type { ItemOf } from "../api-types.js";

type ModelPrice = ItemOf<"GET /console/services/managed-ai/models">;

/** What a million tokens cost this tenant: list price less its discount (CONTRACT §6). */
const effective = (units: number, bps: number) => Math.ceil((units * (10_000 - bps)) / 10_000);

export function Prices() {
  const models = useLoad(() => api.data<ModelPrice[]>("GET", "/console/services/managed-ai/models"));
  return (
    <LoadedTable
      title="Model prices (per million tokens)"
      load={models}
      rowKey={(m) => m.alias}
      empty="No managed models are offered yet."
      columns={[
        ["Model", (m) => <code>{m.alias}</code>],
        ["Input (list)", (m) => usd(m.input_units_per_mtok)],
        ["Output (list)", (m) => usd(m.output_units_per_mtok)],
        ["Your discount", (m) => (m.discount_bps ? `${(m.discount_bps / 100).toFixed(2)} %` : "—")],
        ["Input (yours)", (m) => usd(effective(m.input_units_per_mtok, m.discount_bps))],
        ["Output (yours)", (m) => usd(effective(m.output_units_per_mtok, m.discount_bps))],
        ["Price version", (m) => <code className="small">{m.price_id}</code>],
        ["Enabled", (m) => (m.enabled ? "yes" : "no")],
      ]}
    />
  );
}
