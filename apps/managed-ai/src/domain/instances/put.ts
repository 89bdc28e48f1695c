import { z } from "zod";
import { AppError, parseInput } from "@gateway/errors";
import { usdAmount } from "@gateway/contract";
import { newId } from "@gateway/contract/ids";
import { instanceKeyContext, sealCredential } from "../credentials.js";
import type { ManagedAiContext, Tx } from "../context.js";
import type { Store } from "../ports.js";
import type { ServiceInstance } from "../rows.js";
import { BaseUrl, ApiKey } from "../upstreams/put.js";
import { Actor, NonNegativeUnits, ResourceId } from "../schemas.js";
import { BudgetFields, budgetConfig, checkBudgetPair } from "../budgets/input.js";
import { withBudgets } from "../budgets/instances.js";
import { instanceView, type ByokConfig, type InstanceView, type ManagedConfig } from "./view.js";

const common = {
  actor: Actor,
  tenant_id: ResourceId,
  alias: ResourceId,
  status: z.enum(["active", "disabled"]),
  max_tokens_per_request: z.number().int().min(1).max(10_000_000).optional(),
  max_cost_per_request: usdAmount(1_000_000).optional(),
  ...BudgetFields,
};

const ManagedInput = z.object({
  ...common,
  mode: z.literal("managed"),
  default_model: ResourceId,
  models: z.array(ResourceId).max(200).default([]),
});

/** A provider's model name: any printable text (`gpt-4.1`, `meta-llama/Llama-3-8B`), not only an alias. */
export const ProviderModel = z.string().regex(/^[\x21-\x7e]{1,256}$/, "must be 1-256 printable ASCII characters without spaces");

const ByokInput = z
  .object({
    ...common,
    mode: z.literal("byok"),
    provider: z.string().pipe(z.literal("openai", { error: 'provider must be "openai" (any OpenAI-compatible API)' })),
    base_url: BaseUrl,
    default_model: ProviderModel,
    api_key: ApiKey.optional(),
    connected_account_id: ResourceId.optional(),
    pricing: z.object({ input_units_per_mtok: NonNegativeUnits, output_units_per_mtok: NonNegativeUnits }).optional(),
  })
  .refine((v) => (v.api_key === undefined) !== (v.connected_account_id === undefined), {
    message: "send exactly one of config.api_key or connected_account_id",
    path: ["api_key"],
  });

export const PutInstanceInput = z.discriminatedUnion("mode", [ManagedInput, ByokInput], { error: 'mode must be "managed" or "byok"' });
export type PutInstanceInput = z.input<typeof PutInstanceInput>;

/**
 * Creates the tenant's ai-model instance under `alias`, or updates it (the same
 * call with an existing alias; the mode may change).
 *  - managed: its default model and listed models must be managed models; the
 *    default must be among the listed ones when a list is given.
 *  - byok: the base URL must be allowed by the egress policy (public addresses
 *    unless ALLOW_PRIVATE_TARGETS); exactly one of an inline key (sealed, the
 *    instance id as associated data) or one of the tenant's connected accounts
 *    of the same provider.
 */
export async function putInstance({ ctx, input }: { ctx: ManagedAiContext; input: PutInstanceInput }): Promise<InstanceView> {
  const q = parseInput(PutInstanceInput, input);
  checkBudgetPair(q);
  const [view] = await withBudgets({ ctx, input: { views: [await (q.mode === "managed" ? putManaged(ctx, q) : putByok(ctx, q))] } });
  return view!;
}

async function putManaged(ctx: ManagedAiContext, q: z.output<typeof ManagedInput>): Promise<InstanceView> {
  const models = [...new Set(q.models)];
  if (models.length > 0 && !models.includes(q.default_model)) {
    throw new AppError("validation_failed", "default_model must be one of models", { extra: { param: "default_model" } });
  }
  const known = await ctx.store.models.known([q.default_model, ...models]);
  const missing = [q.default_model, ...models].find((alias) => !known.includes(alias));
  if (missing)
    throw new AppError("validation_failed", `${missing} is not a managed model`, {
      extra: { param: missing === q.default_model ? "default_model" : "models" },
    });

  const config: ManagedConfig = {
    mode: "managed",
    default_model: q.default_model,
    ...(models.length > 0 ? { models } : {}),
    ...(q.max_tokens_per_request !== undefined ? { max_tokens_per_request: q.max_tokens_per_request } : {}),
    ...(q.max_cost_per_request !== undefined ? { max_cost_per_request: q.max_cost_per_request } : {}),
    ...budgetConfig(q),
  };
  const row = await ctx.writeCatalog(async (tx, emit) => {
    const { saved, existing } = await save(ctx.store, tx, q, config, () => ({ apiKeyCiphertext: null, apiKeyKeyId: null, connectedAccountId: null }));
    await emit("managed_ai.instance_changed", {
      ...changeOf(q.actor, saved, existing),
      default_model: q.default_model,
    });
    return saved;
  });
  return instanceView(row);
}

async function putByok(ctx: ManagedAiContext, q: z.output<typeof ByokInput>): Promise<InstanceView> {
  const egress = await ctx.provider.checkBaseUrl(q.base_url);
  if (!egress.ok) {
    throw new AppError("validation_failed", `config.base_url is not allowed (${egress.reason}): it must resolve to public addresses only`, {
      extra: { param: "base_url" },
    });
  }
  const config: ByokConfig = {
    mode: "byok",
    provider: q.provider,
    base_url: q.base_url,
    default_model: q.default_model,
    ...(q.max_tokens_per_request !== undefined ? { max_tokens_per_request: q.max_tokens_per_request } : {}),
    ...(q.max_cost_per_request !== undefined ? { max_cost_per_request: q.max_cost_per_request } : {}),
    ...(q.pricing
      ? { pricing: { input_units_per_mtok: q.pricing.input_units_per_mtok.toString(), output_units_per_mtok: q.pricing.output_units_per_mtok.toString() } }
      : {}),
    ...budgetConfig(q),
  };
  const row = await ctx.writeCatalog(async (tx, emit) => {
    if (q.connected_account_id !== undefined) {
      const provider = await ctx.store.accounts.provider(tx, q.tenant_id, q.connected_account_id);
      if (!provider) throw new AppError("validation_failed", `No connected account ${q.connected_account_id}.`, { extra: { param: "connected_account_id" } });
      if (provider !== q.provider) {
        throw new AppError("validation_failed", `The connected account is for ${provider}, not ${q.provider}.`, {
          extra: { param: "connected_account_id" },
        });
      }
    }
    const { saved, existing } = await save(ctx.store, tx, q, config, (id) => {
      if (q.api_key === undefined) return { apiKeyCiphertext: null, apiKeyKeyId: null, connectedAccountId: q.connected_account_id ?? null };
      const sealed = sealCredential(ctx.keyring, q.api_key, instanceKeyContext(id));
      return { apiKeyCiphertext: sealed.ciphertext, apiKeyKeyId: sealed.keyId, connectedAccountId: null };
    });
    await emit("managed_ai.byok_instance_changed", {
      ...changeOf(q.actor, saved, existing),
      provider: q.provider,
      base_url: q.base_url,
      default_model: q.default_model,
      credential: q.api_key !== undefined ? "inline" : "connected_account",
      connected_account_id: q.connected_account_id ?? null,
    });
    return saved;
  });
  return instanceView(row);
}

/** What both instance events open with: who, which instance, whether it was created or updated, its status. */
function changeOf<A>(actor: A, saved: ServiceInstance, existing: boolean) {
  return {
    actor,
    instance_id: saved.id,
    tenant_id: saved.tenantId,
    alias: saved.alias,
    change: existing ? ("updated" as const) : ("created" as const),
    status: saved.status,
  };
}

type Credential = { apiKeyCiphertext: Uint8Array<ArrayBuffer> | null; apiKeyKeyId: string | null; connectedAccountId: string | null };

/** Creates or updates the (tenant, ai-model, alias) row, the row locked while it is compared and written. */
async function save(
  store: Pick<Store, "locks" | "instances">,
  tx: Tx,
  q: { tenant_id: string; alias: string; status: string; mode: string },
  config: ManagedConfig | ByokConfig,
  credential: (id: string) => Credential,
): Promise<{ saved: ServiceInstance; existing: boolean }> {
  const existing = await store.locks.instance(tx, q.tenant_id, q.alias);
  const id = existing ?? newId("inst");
  const data = { status: q.status, mode: q.mode, config: config as object, ...credential(id) };
  const saved = existing
    ? await store.instances.update(tx, id, data)
    : await store.instances.create(tx, { id, tenantId: q.tenant_id, alias: q.alias, ...data });
  return { saved, existing: existing !== null };
}
