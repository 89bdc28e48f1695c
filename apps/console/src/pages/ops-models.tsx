import { useState } from "react";
import { api } from "../client.js";
import { intOrUndefined, usd, when } from "../format.js";
import { ActionForm, Card, Field, LoadedTable, useLoad } from "../ui.js";
import type { DataOf, ItemOf } from "../api-types.js";

type Price = ItemOf<"GET /ops/ai/models/{alias}/prices">;
type Model = ItemOf<"GET /ops/ai/models">;

export function Models({ canWrite }: { canWrite: boolean }) {
  const models = useLoad(() => api.data<Model[]>("GET", "/ops/ai/models"));
  const [selected, setSelected] = useState<string | null>(null);
  const [f, setF] = useState({ alias: "", upstream_id: "", upstream_model: "", max_output: "", per_image: "", enabled: true });
  return (
    <>
      <LoadedTable
        title="Models"
        load={models}
        rowKey={(m) => m.alias}
        empty="No models yet."
        columns={[
          ["Alias", (m) => <code>{m.alias}</code>],
          ["Upstream", (m) => `${m.upstream_id} / ${m.upstream_model}`],
          ["Max output", (m) => m.max_output_tokens],
          ["Per image", (m) => m.max_tokens_per_image ?? <em>images refused</em>],
          ["Enabled", (m) => (m.enabled ? "yes" : "no")],
          [
            "Price (per M tokens in / out)",
            (m) =>
              m.price ? `v${m.price.version}: ${usd(m.price.input_units_per_mtok)} / ${usd(m.price.output_units_per_mtok)}` : <em>no price: not offered</em>,
          ],
          ["Version", (m) => m.version],
          [
            "",
            (m) => (
              <button className="secondary" onClick={() => setSelected(m.alias)}>
                Prices
              </button>
            ),
          ],
        ]}
      />
      {selected ? <PriceHistory alias={selected} canWrite={canWrite} onPublished={models.reload} key={selected} /> : null}
      {canWrite ? (
        <Card title="Create or update a model">
          <ActionForm
            submit="Save model"
            onSubmit={async () => {
              const max = intOrUndefined(f.max_output);
              const perImage = intOrUndefined(f.per_image);
              const saved = await api.data<DataOf<"PUT /ops/ai/models/{alias}">>("PUT", `/ops/ai/models/${encodeURIComponent(f.alias.trim())}`, {
                body: {
                  upstream_id: f.upstream_id.trim(),
                  upstream_model: f.upstream_model.trim(),
                  enabled: f.enabled,
                  ...(max !== undefined ? { max_output_tokens: max } : {}),
                  // 0 turns images off (null); empty leaves the setting as it is.
                  ...(perImage !== undefined ? { max_tokens_per_image: perImage === 0 ? null : perImage } : {}),
                },
              });
              models.reload();
              return `Saved ${saved.alias} (version ${saved.version}).`;
            }}
          >
            <div className="row">
              <Field label="Alias" hint="What customers ask for.">
                <input name="model_alias" value={f.alias} onChange={(e) => setF({ ...f, alias: e.target.value })} required />
              </Field>
              <Field label="Upstream id">
                <input name="model_upstream" value={f.upstream_id} onChange={(e) => setF({ ...f, upstream_id: e.target.value })} required />
              </Field>
              <Field label="Provider's model">
                <input name="upstream_model" value={f.upstream_model} onChange={(e) => setF({ ...f, upstream_model: e.target.value })} required />
              </Field>
              <Field label="Max output tokens" hint="Empty: 4096 (or unchanged).">
                <input name="max_output_tokens" inputMode="numeric" value={f.max_output} onChange={(e) => setF({ ...f, max_output: e.target.value })} />
              </Field>
              <Field label="Max tokens per image" hint="Input tokens one image part may count. Empty: unchanged (new: images refused); 0: refuse images.">
                <input name="max_tokens_per_image" inputMode="numeric" value={f.per_image} onChange={(e) => setF({ ...f, per_image: e.target.value })} />
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

function PriceHistory({ alias, canWrite, onPublished }: { alias: string; canWrite: boolean; onPublished: () => void }) {
  const prices = useLoad(() => api.data<Price[]>("GET", `/ops/ai/models/${encodeURIComponent(alias)}/prices`), [alias]);
  const [input, setInput] = useState("");
  const [output, setOutput] = useState("");
  return (
    <LoadedTable
      title={`Price versions of ${alias}`}
      load={prices}
      rowKey={(p) => p.id}
      empty="No price yet: the model is not offered until one is published."
      columns={[
        ["Version", (p) => `v${p.version}`],
        ["Input per M tokens", (p) => usd(p.input_units_per_mtok)],
        ["Output per M tokens", (p) => usd(p.output_units_per_mtok)],
        ["Id", (p) => <code className="small">{p.id}</code>],
        ["Published", (p) => when(p.created_at)],
      ]}
    >
      {canWrite ? (
        <ActionForm
          submit="Publish new price"
          onSubmit={async () => {
            const model = await api.data<DataOf<"POST /ops/ai/models/{alias}/prices">>("POST", `/ops/ai/models/${encodeURIComponent(alias)}/prices`, {
              body: { input_units_per_mtok: intOrUndefined(input) ?? Number.NaN, output_units_per_mtok: intOrUndefined(output) ?? Number.NaN },
            });
            prices.reload();
            onPublished();
            return `Published v${model.price?.version}; it applies to new requests. Earlier versions stay as they were.`;
          }}
        >
          <div className="row">
            <Field label="Input (units per M tokens)" hint="Units of USD 0.0001: 1500 = $0.15.">
              <input name="input_units_per_mtok" inputMode="numeric" value={input} onChange={(e) => setInput(e.target.value)} required />
            </Field>
            <Field label="Output (units per M tokens)">
              <input name="output_units_per_mtok" inputMode="numeric" value={output} onChange={(e) => setOutput(e.target.value)} required />
            </Field>
          </div>
        </ActionForm>
      ) : null}
    </LoadedTable>
  );
}
