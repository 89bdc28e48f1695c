import type { Implementation } from "@gateway/grpc-kit";
import { AppError, isAppError } from "@gateway/errors";
import { newId } from "@gateway/contract/ids";
import { currentContext, currentRequestId, runWithContext } from "@gateway/logger";
import type { ledger, ledgerV1 } from "@gateway/protos";
import type { LedgerContext } from "../domain/context.js";
import { postAllotment } from "../domain/allotment/post.js";
import { releaseAllotment } from "../domain/allotment/release.js";
import { MAX_REPORTS, parseReports, reportAllotments } from "../domain/allotment/report.js";
import { getBalance } from "../domain/balance/get.js";
import { createCredit } from "../domain/credit/create.js";
import { listEvents } from "../domain/entry/events.js";
import { listEntries } from "../domain/entry/list.js";
import { captureHold } from "../domain/hold/capture.js";
import { getHold, getHolds, getTransfers } from "../domain/hold/get.js";
import { reserveHold } from "../domain/hold/reserve.js";
import type { SettleHoldResult } from "../domain/hold/settle.js";
import { voidHold } from "../domain/hold/void.js";
import { checkInvariant } from "../domain/invariant/check.js";
import { toBalance, toEntry, toHold, toMovement, toTenantInvariant, toTransferOf } from "./encode.js";

/** At most this many movements per ApplyBatch call. */
export const MAX_BATCH_ITEMS = 500;

/** Transport only: decode, call the domain, encode. */
export function ledgerHandlers(ctx: LedgerContext): Implementation<typeof ledgerV1> {
  const reserve = async (req: ledger.ReserveRequest__Output): Promise<ledger.ReserveResponse> => {
    const r = await reserveHold({ ctx, input: req });
    return { ...toMovement(r), hold_id: r.holdId, units: r.units.toString(), expires_at: r.expiresAt.toISOString() };
  };
  const capture = async (req: ledger.CaptureRequest__Output): Promise<ledger.CaptureResponse> => {
    return settled(await captureHold({ ctx, input: req }));
  };
  const settled = (r: SettleHoldResult) => ({ ...toMovement(r), hold: toHold(r.hold) });
  const release = async (req: ledger.VoidRequest__Output): Promise<ledger.VoidResponse> => settled(await voidHold({ ctx, input: req }));

  /** One item of a batch, as its single call would answer it, in its own request's context. */
  const applyOne = (item: ledger.Movement__Output): Promise<ledger.MovementResult> => {
    const context = { ...currentContext(), requestId: item.request_id || (currentRequestId() ?? newId("req")) };
    return runWithContext(context, async (): Promise<ledger.MovementResult> => {
      try {
        if (item.kind === "reserve" && item.reserve) return { reserved: await reserve(item.reserve) };
        if (item.kind === "capture" && item.capture) return { captured: await capture(item.capture) };
        if (item.kind === "void" && item.void) return { voided: await release(item.void) };
        if (item.kind === "post" && item.post) return { posted: settled(await postAllotment({ ctx, input: item.post })) };
        if (item.kind === "release" && item.release) return { released: settled(await releaseAllotment({ ctx, input: item.release })) };
        throw new AppError("invalid_request", "each item needs one of reserve, capture, void, post or release");
      } catch (err) {
        if (isAppError(err)) return { error: { code: err.code, message: err.message } };
        ctx.logger.error({ err }, "a batched movement failed");
        return { error: { code: "internal_error", message: "Internal error; quote the request id when reporting it." } };
      }
    });
  };

  return {
    async Credit(req) {
      return toMovement(await createCredit({ ctx, input: req }));
    },
    async GetBalance(req) {
      return toBalance(await getBalance({ ctx, input: req }));
    },
    async Reserve(req) {
      return reserve(req);
    },
    async Capture(req) {
      return capture(req);
    },
    async Void(req) {
      return release(req);
    },
    async ApplyBatch(req) {
      if (req.items.length > MAX_BATCH_ITEMS) throw new AppError("invalid_request", `items: at most ${MAX_BATCH_ITEMS} movements`);
      if (req.reports.length > MAX_REPORTS) throw new AppError("invalid_request", `reports: at most ${MAX_REPORTS}`);
      if (req.items.length === 0 && req.reports.length === 0) throw new AppError("invalid_request", "a batch needs items or reports");
      // Reports are checked first: a malformed one refuses the call before any item moves.
      const reports = parseReports({ reports: req.reports });
      // Submitted together, the movements meet in the ledger's queue and commit as batches;
      // the allotments' claims follow them, in one statement.
      const results = await Promise.all(req.items.map(applyOne));
      await reportAllotments({ ctx, input: reports });
      return { results };
    },
    async GetHold(req) {
      return toHold(await getHold({ ctx, input: req }));
    },
    async GetTransfers(req) {
      return { transfers: (await getTransfers({ ctx, input: req })).map(toTransferOf) };
    },
    async ListEvents(req) {
      const rows = await listEvents({ ctx, input: req });
      return {
        events: rows.map((e) => ({
          event_id: e.id,
          type: e.type,
          source: "ledger",
          request_id: e.requestId ?? "",
          occurred_at: e.createdAt.toISOString(),
          data_json: e.dataJson,
        })),
      };
    },
    async GetHolds(req) {
      return { holds: (await getHolds({ ctx, input: req })).map(toHold) };
    },
    async ListEntries(req) {
      const r = await listEntries({ ctx, input: req });
      return { entries: r.entries.map(toEntry), next_cursor: r.nextCursor };
    },
    async CheckInvariant(req) {
      const r = await checkInvariant({ ctx, input: req });
      return {
        ok: r.ok,
        tenants: r.tenants.map(toTenantInvariant),
        journal_sum: r.journalSum.toString(),
        unbalanced_transfers: r.unbalancedTransfers.toString(),
      };
    },
  };
}
