import { perDay, perModel, type UsageRecord } from "../charts.js";
import { api, type Me } from "../client.js";
import { usd } from "../format.js";
import { BarChart, Card, ErrorBox, Refresh, useLoad } from "../ui.js";
import type { DataOf } from "../api-types.js";

type Balance = DataOf<"GET /console/balance">;

export function Overview({ me }: { me: Me }) {
  const balance = useLoad(() => api.data<Balance>("GET", "/console/balance"));
  const usage = useLoad(() => api.data<UsageRecord[]>("GET", "/console/services/managed-ai/usage"));
  const records = usage.data ?? [];
  const days = perDay(records);
  const models = perModel(records);
  return (
    <>
      <Card title="Balance" actions={<Refresh load={balance} />}>
        <ErrorBox error={balance.error} />
        {balance.data ? (
          <dl className="stats">
            <div>
              <dt>Available</dt>
              <dd data-testid="balance-available">{usd(balance.data.available_units)}</dd>
            </div>
            <div>
              <dt>Reserved (calls in flight)</dt>
              <dd data-testid="balance-reserved">{usd(balance.data.reserved_units)}</dd>
            </div>
            <div>
              <dt>Tenant</dt>
              <dd className="mono">{me.tenant_id}</dd>
            </div>
          </dl>
        ) : null}
      </Card>
      <Card title="Calls and spend (latest 100 managed requests)">
        <ErrorBox error={usage.error} />
        <div className="charts">
          <BarChart title="Calls per day" buckets={days} value={(b) => b.calls} format={String} />
          <BarChart title="Spend per day" buckets={days} value={(b) => b.spendUnits} format={usd} />
          <BarChart title="Calls per model" buckets={models} value={(b) => b.calls} format={String} />
          <BarChart title="Spend per model" buckets={models} value={(b) => b.spendUnits} format={usd} />
        </div>
      </Card>
    </>
  );
}
