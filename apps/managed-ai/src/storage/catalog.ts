import type { ModelRows, OfferRows, PriceRows, UpstreamRows } from "../domain/ports.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { on, prismaTx } from "./prisma-tx.js";
import { replaceApiKey } from "./sealed.js";

/*
 * The catalog's rows as the domain reads and writes them (ports UpstreamRows, ModelRows,
 * PriceRows, OfferRows in domain/ports.ts): Prisma's calls on the tables `upstreams`,
 * `models`, `price_versions` and `offers`, whose rows are the domain's row types
 * (domain/rows.ts) column for column. Writes run in the caller's transaction.
 */

/** Columns read when the credential itself is not needed (most of the time). */
const UPSTREAM_COLUMNS = {
  id: true,
  provider: true,
  baseUrl: true,
  enabled: true,
  apiKeyKeyId: true,
  version: true,
  createdAt: true,
  updatedAt: true,
} as const;

/** Prisma `include` that brings a model's newest price version along. */
const WITH_LATEST_PRICE = { prices: { orderBy: { version: "desc" }, take: 1 } } as const;

export function upstreamRows(prisma: PrismaClient): UpstreamRows {
  return {
    list: (limit) => prisma.upstream.findMany({ select: UPSTREAM_COLUMNS, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: limit }),
    get: (tx, id) => prismaTx(tx).upstream.findUnique({ where: { id }, select: UPSTREAM_COLUMNS }),
    target: (id) => prisma.upstream.findUnique({ where: { id }, select: { baseUrl: true, apiKeyCiphertext: true, apiKeyKeyId: true } }),
    exists: async (tx, id) => (await prismaTx(tx).upstream.findUnique({ where: { id }, select: { id: true } })) !== null,
    create: async (tx, id, write) =>
      (
        await prismaTx(tx).upstream.createMany({
          data: [{ id, provider: write.provider, baseUrl: write.baseUrl, enabled: write.enabled, version: 1, ...write.key }],
          skipDuplicates: true,
        })
      ).count > 0,
    update: async (tx, id, version, write) =>
      (
        await prismaTx(tx).upstream.updateMany({
          where: { id, version },
          data: { provider: write.provider, baseUrl: write.baseUrl, enabled: write.enabled, version: { increment: 1 }, ...write.key },
        })
      ).count > 0,
    sealedKeys: async () =>
      (
        await prisma.upstream.findMany({
          where: { apiKeyKeyId: { not: null } },
          select: { id: true, apiKeyCiphertext: true, apiKeyKeyId: true, updatedAt: true },
          orderBy: { id: "asc" },
        })
      ).flatMap((r) =>
        r.apiKeyCiphertext && r.apiKeyKeyId ? [{ id: r.id, ciphertext: r.apiKeyCiphertext, keyId: r.apiKeyKeyId, updatedAt: r.updatedAt }] : [],
      ),
    replaceKey: replaceApiKey((args) => prisma.upstream.updateMany(args)),
  };
}

export function modelRows(prisma: PrismaClient): ModelRows {
  return {
    list: (limit) => prisma.model.findMany({ include: WITH_LATEST_PRICE, orderBy: [{ createdAt: "desc" }, { alias: "desc" }], take: limit }),
    exists: async (alias, tx) => (await on(prisma, tx).model.findUnique({ where: { alias }, select: { alias: true } })) !== null,
    get: (tx, alias) => prismaTx(tx).model.findUnique({ where: { alias } }),
    withPrice: (tx, alias) => prismaTx(tx).model.findUnique({ where: { alias }, include: WITH_LATEST_PRICE }),
    create: async (tx, alias, write) => (await prismaTx(tx).model.createMany({ data: [{ alias, ...write, version: 1 }], skipDuplicates: true })).count > 0,
    update: async (tx, alias, version, write) =>
      (await prismaTx(tx).model.updateMany({ where: { alias, version }, data: { ...write, version: { increment: 1 } } })).count > 0,
    known: async (aliases) => (await prisma.model.findMany({ where: { alias: { in: aliases } }, select: { alias: true } })).map((m) => m.alias),
    priced: (tenantId) =>
      prisma.model.findMany({
        where: { prices: { some: {} } },
        include: { prices: { orderBy: { version: "desc" }, take: 1 }, offers: { where: { tenantId } } },
        orderBy: [{ createdAt: "desc" }, { alias: "desc" }],
        take: 200,
      }),
    servable: (aliases) =>
      prisma.model.findMany({
        where: { enabled: true, prices: { some: {} }, ...(aliases && aliases.length > 0 ? { alias: { in: aliases } } : {}) },
        select: { alias: true, createdAt: true },
        orderBy: [{ createdAt: "desc" }, { alias: "asc" }],
        take: 200,
      }),
  };
}

export function priceRows(prisma: PrismaClient): PriceRows {
  return {
    list: (modelAlias, limit) => prisma.priceVersion.findMany({ where: { modelAlias }, orderBy: { version: "desc" }, take: limit }),
    get: (id) => prisma.priceVersion.findUnique({ where: { id } }),
    latest: (tx, modelAlias) => prismaTx(tx).priceVersion.findFirst({ where: { modelAlias }, orderBy: { version: "desc" } }),
    create: (tx, price) => prismaTx(tx).priceVersion.create({ data: price }),
  };
}

export function offerRows(prisma: PrismaClient): OfferRows {
  return {
    list: ({ tenantId, modelAlias, limit }) =>
      prisma.offer.findMany({
        where: { ...(tenantId ? { tenantId } : {}), ...(modelAlias ? { modelAlias } : {}) },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: limit,
      }),
    get: (tx, tenantId, modelAlias) => prismaTx(tx).offer.findUnique({ where: { tenantId_modelAlias: { tenantId, modelAlias } } }),
    create: async (tx, offer) => (await prismaTx(tx).offer.createMany({ data: [{ ...offer, version: 1 }], skipDuplicates: true })).count > 0,
    update: async (tx, id, version, write) =>
      (
        await prismaTx(tx).offer.updateMany({
          where: { id, version },
          data: { discountBps: write.discountBps, ...(write.expiresAt === undefined ? {} : { expiresAt: write.expiresAt }), version: { increment: 1 } },
        })
      ).count > 0,
  };
}
