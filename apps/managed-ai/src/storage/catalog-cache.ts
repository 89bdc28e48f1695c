import type { Broadcast, SqlExecutor, Transact } from "@gateway/events-runtime";
import type { CatalogReads, PlannedModel } from "../domain/ports.js";
import type { ConnectedAccount, PrismaClient, ServiceInstance } from "../generated/prisma/client.js";

type Entry<T> = { value: T; until: number };
/** A kind of cached row: the loaded entries, and the loads under way. */
type Store<T> = { entries: Map<string, Entry<T>>; loading: Map<string, { generation: number; value: Promise<T> }> };
const store = <T>(): Store<T> => ({ entries: new Map(), loading: new Map() });

/**
 * What every invocation reads before money moves (the tenant's instance; the
 * model with its upstream, newest price and the tenant's offer), kept in memory
 * for `ttlMs`. Any committed catalog write empties it, on this replica at once
 * and on the others through a NATS broadcast; the TTL bounds staleness should a
 * broadcast be lost. A load that raced a flush is not stored.
 */
export class CatalogCache implements CatalogReads {
  private generation = 0;
  private readonly instances = store<ServiceInstance | null>();
  private readonly models = store<PlannedModel | null>();
  private readonly accounts = store<ConnectedAccount | null>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly ttlMs: number,
    private readonly broadcast?: Broadcast<{ changed: true }>,
  ) {}

  listen(): void {
    this.broadcast?.listen(() => this.flush());
  }

  /** A catalog write committed here: forget everything, here and on every replica. */
  changed(): void {
    this.flush();
    void this.broadcast?.send({ changed: true }).catch(() => undefined);
  }

  flush(): void {
    this.generation++;
    this.instances.entries.clear();
    this.models.entries.clear();
    this.accounts.entries.clear();
  }

  instance(tenantId: string, alias: string): Promise<ServiceInstance | null> {
    return this.cached(this.instances, `${tenantId}\u0000${alias}`, () =>
      this.prisma.serviceInstance.findUnique({ where: { tenantId_serviceId_alias: { tenantId, serviceId: "ai-model", alias } } }),
    );
  }

  model(alias: string, tenantId: string): Promise<PlannedModel | null> {
    return this.cached(this.models, `${alias}\u0000${tenantId}`, () =>
      this.prisma.model.findUnique({
        where: { alias },
        include: { upstream: true, prices: { orderBy: { version: "desc" }, take: 1 }, offers: { where: { tenantId } } },
      }),
    );
  }

  /** One of the tenant's connected accounts (sealed secret included), for bring-your-own-key instances. */
  account(tenantId: string, id: string): Promise<ConnectedAccount | null> {
    return this.cached(this.accounts, `${tenantId}\u0000${id}`, () => this.prisma.connectedAccount.findFirst({ where: { id, tenantId } }));
  }

  /**
   * One load per key at a time: the requests that miss while it is under way (every
   * concurrent request, when an entry expires under load) wait for it instead of each
   * reading the same rows. A flush meanwhile starts a new generation, whose callers
   * load afresh.
   */
  private cached<T>({ entries, loading }: Store<T>, key: string, load: () => Promise<T>): Promise<T> {
    const hit = entries.get(key);
    if (hit && hit.until > Date.now()) return Promise.resolve(hit.value);
    const pending = loading.get(key);
    if (pending && pending.generation === this.generation) return pending.value;
    const generation = this.generation;
    const done = () => {
      if (loading.get(key)?.value === value) loading.delete(key);
    };
    const value = load().then(
      (v) => {
        done();
        if (generation === this.generation && this.ttlMs > 0) {
          if (entries.size > 50_000) entries.clear();
          entries.set(key, { value: v, until: Date.now() + this.ttlMs });
        }
        return v;
      },
      (err: unknown) => {
        done();
        throw err;
      },
    );
    loading.set(key, { generation, value });
    return value;
  }
}

/**
 * The service's Prisma transactions, each followed by `catalog.changed()` once it
 * committed: every Prisma write of managed-ai is a catalog write (upstreams,
 * models, prices, offers, instances, releases), so cached plans are stale after it.
 */
export function invalidating<Tx extends SqlExecutor>(transact: Transact<Tx>, catalog: CatalogCache): Transact<Tx> {
  return async (fn) => {
    const result = await transact(fn);
    catalog.changed();
    return result;
  };
}
