import type { Statements } from "@gateway/events-runtime";
import type { Store } from "../domain/ports.js";
import type { PrismaClient } from "../generated/prisma/client.js";
import { allotmentReads } from "./allotment-reads.js";
import { allotmentReserve, chargesOf, checkAgain, closeIdle, markClosed, openingAbandoned, openingFound, recordsInFlight } from "./allotments.js";
import { budgetReservations, markCrossing, openClaimRequests, readCounters, settlePushClaims, settleRecordClaims } from "./budgets.js";
import { modelRows, offerRows, priceRows, upstreamRows } from "./catalog.js";
import { lockConnectedAccount, lockInstance, lockModel, lockOffer, lockUpstream } from "./catalog-locks.js";
import { connectedAccountRows } from "./connected-accounts.js";
import { instanceRows } from "./instances.js";
import { advanceCapturesCheckpoint, candidateIds, capturesAfter, exclusively, recheckAt, workPending } from "./reconciler.js";
import { exportAndDeleteMonth, monthsBefore } from "./retention.js";
import { requestEvents } from "./request-events.js";
import { usageRows } from "./usage.js";
import { deleteRefused, moveRow, recountIn, toSettlementFailed } from "./usage-records.js";

/**
 * The domain's Store port (domain/ports.ts, docs/decisions/0290) made of this directory's
 * statements and reads: the plain-SQL ones outside a caller's transaction run on `sql`,
 * the Prisma ones on `prisma`, the others in the transaction (or on the pool) the
 * domain hands in.
 */
export function sqlStore(sql: Statements, prisma: PrismaClient): Store {
  const reservations = budgetReservations(sql);
  return {
    locks: { upstream: lockUpstream, model: lockModel, offer: lockOffer, instance: lockInstance, connectedAccount: lockConnectedAccount },
    upstreams: upstreamRows(prisma),
    models: modelRows(prisma),
    prices: priceRows(prisma),
    offers: offerRows(prisma),
    instances: instanceRows(prisma),
    accounts: connectedAccountRows(prisma),
    usage: { ...usageRows(prisma), events: (requestId, tenantId) => requestEvents(sql, requestId, tenantId) },
    records: { move: moveRow, toSettlementFailed, deleteRefused, recount: recountIn },
    budgets: {
      reserve: (reservation) => reservations.reserve(reservation),
      readCounters: (keys) => readCounters(sql, keys),
      settleRecordClaims: (requestIds, orphans, orphanAfterSeconds) => settleRecordClaims(sql, requestIds, orphans, orphanAfterSeconds),
      settlePushClaims: (requestId, finalUnits) => settlePushClaims(sql, requestId, finalUnits),
      openClaimRequests: (limit) => openClaimRequests(sql, limit),
      markCrossing,
    },
    reconciler: {
      workPending: () => workPending(sql),
      candidateIds: (status, olderThan, now, limit) => candidateIds(sql, status, olderThan, now, limit),
      capturesAfter: (cp, settledBefore, limit) => capturesAfter(sql, cp, settledBefore, limit),
      recheckAt: (recordId, seconds) => recheckAt(sql, recordId, seconds),
      advanceCapturesCheckpoint: (through) => advanceCapturesCheckpoint(sql, through),
      exclusively,
    },
    retention: { monthsBefore, exportAndDeleteMonth: (pool, month, dir) => exportAndDeleteMonth(pool, month, dir) },
    allotments: {
      reserveRequest: allotmentReserve,
      closeIdle: (idleSeconds, maxAgeSeconds) => closeIdle(sql, idleSeconds, maxAgeSeconds),
      recordsInFlight: (id) => recordsInFlight(sql, id),
      chargesOf: (id) => chargesOf(sql, id),
      checkAgain: (id, delay) => checkAgain(sql, id, delay),
      openingFound: (id, holdId) => openingFound(sql, id, holdId),
      openingAbandoned: (id) => openingAbandoned(sql, id),
      markClosed: (id) => markClosed(sql, id),
      ...allotmentReads(prisma),
    },
  };
}
