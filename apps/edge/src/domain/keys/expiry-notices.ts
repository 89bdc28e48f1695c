import type { Logger } from "@gateway/logger";
import type { Db } from "../../db.js";

const DAY_MS = 86_400_000;

/** Notices before a key's expires_at, in days, the earlier first (CONTRACT.md section 13). */
export const NOTICE_DAYS = [7, 1] as const;

export type ExpiryNoticeOptions = {
  logger: Logger;
  /** The clock (ms since the epoch); tests hand in their own. */
  now?: () => number;
  /** The longest wait between two scans when nothing falls due sooner (default 1 h). */
  maxWaitMs?: number;
  /** Keys noticed per scan at most (the rest in the next, at once). */
  batch?: number;
};

/**
 * `key.expiring` 7 days and again 1 day before a live key's `expires_at`
 * (docs/decisions/0210), from a scheduled scan that costs nothing while nothing
 * falls due: each scan notices the keys whose time has come and then sleeps until
 * the next one's (one indexed read), or `maxWaitMs` at most, the bound within which
 * a key another replica created is noticed if that replica is gone. A key created
 * here wakes the scan when its notice falls due sooner.
 *
 * Every edge replica scans; a notice is a compare-and-set of the key's
 * `expiry_notice` (null → 7 → 1) with its outbox event in the same transaction, so
 * each goes out once. A key found within 1 day of its expiry with no notice yet gets
 * only the 1-day one.
 */
export class KeyExpiryNotices {
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Number.POSITIVE_INFINITY;
  private running: Promise<void> | undefined;
  /** The earliest notice of a key created while a round ran (that round may not have seen it). */
  private createdDue = Number.POSITIVE_INFINITY;
  private stopped = false;
  private readonly now: () => number;
  private readonly maxWaitMs: number;
  private readonly batch: number;

  constructor(
    private readonly db: Db,
    private readonly options: ExpiryNoticeOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.maxWaitMs = options.maxWaitMs ?? 3_600_000;
    this.batch = options.batch ?? 100;
  }

  /** Scans now, then on its own schedule. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** A key with this expiry was created: scan when its first notice falls due, if that is sooner than planned. */
  keyCreated(expiresAt: Date | null): void {
    if (!expiresAt || this.stopped) return;
    const due = expiresAt.getTime() - NOTICE_DAYS[0] * DAY_MS;
    // A round under way plans its next wake when it ends, from `createdDue`; one that has
    // already planned it (its timer is set, its promise not settled yet) is woken sooner here.
    if (this.running && !this.timer) this.createdDue = Math.min(this.createdDue, due);
    else if (due < this.wakeAt) this.schedule(due - this.now());
  }

  /** The clock's time of the last scan's last read: what it found due was due by then. */
  private scannedAt = Number.NEGATIVE_INFINITY;

  /** Sends the notices due now; answers how many it sent. */
  async scan(): Promise<number> {
    let sent = 0;
    for (;;) {
      const now = this.now();
      this.scannedAt = now;
      const due = await this.db.prisma.apiKey.findMany({
        where: {
          revokedAt: null,
          expiresAt: { gt: new Date(now), lte: new Date(now + NOTICE_DAYS[0] * DAY_MS) },
          OR: [{ expiryNotice: null }, { expiryNotice: NOTICE_DAYS[0], expiresAt: { lte: new Date(now + NOTICE_DAYS[1] * DAY_MS) } }],
        },
        select: { id: true, tenantId: true, prefix: true, expiresAt: true, expiryNotice: true },
        orderBy: { expiresAt: "asc" },
        take: this.batch,
      });
      for (const key of due) {
        const expiresAt = key.expiresAt!;
        const days = expiresAt.getTime() - now <= NOTICE_DAYS[1] * DAY_MS ? NOTICE_DAYS[1] : NOTICE_DAYS[0];
        const noticed = await this.db.transact(async (tx, emit) => {
          const moved = await tx.apiKey.updateMany({ where: { id: key.id, revokedAt: null, expiryNotice: key.expiryNotice }, data: { expiryNotice: days } });
          if (moved.count === 0) return false; // another replica sent it
          await emit("key.expiring", { key_id: key.id, tenant_id: key.tenantId, prefix: key.prefix, expires_at: expiresAt.toISOString(), days_left: days });
          return true;
        });
        if (noticed) {
          sent++;
          this.options.logger.info({ key_id: key.id, tenant_id: key.tenantId, days_left: days }, "key.expiring noticed");
        }
      }
      if (due.length < this.batch) return sent;
    }
  }

  /**
   * When the next notice after `now` falls due (ms since the epoch), or null when no live key
   * has one left. A round asks from its scan's time, so a notice falling due between the
   * scan's read and this one is planned (at once) instead of left to the longest wait.
   */
  async nextDue(now = this.now()): Promise<number | null> {
    const [first, second] = await Promise.all(
      NOTICE_DAYS.map((days, i) =>
        this.db.prisma.apiKey.aggregate({
          _min: { expiresAt: true },
          where: { revokedAt: null, expiryNotice: i === 0 ? null : NOTICE_DAYS[0], expiresAt: { gt: new Date(now + days * DAY_MS) } },
        }),
      ),
    );
    const times = [
      first?._min.expiresAt ? first._min.expiresAt.getTime() - NOTICE_DAYS[0] * DAY_MS : null,
      second?._min.expiresAt ? second._min.expiresAt.getTime() - NOTICE_DAYS[1] * DAY_MS : null,
    ].filter((t): t is number => t !== null);
    return times.length > 0 ? Math.min(...times) : null;
  }

  private schedule(inMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    const wait = Math.min(Math.max(0, inMs), this.maxWaitMs);
    this.wakeAt = this.now() + wait;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.round().finally(() => {
        this.running = undefined;
      });
    }, wait);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    this.createdDue = Number.POSITIVE_INFINITY;
    let next: number | null = null;
    try {
      await this.scan();
      next = await this.nextDue(this.scannedAt);
    } catch (err) {
      this.options.logger.warn({ err }, "key expiry scan failed; trying again in a minute");
      if (!this.stopped) this.schedule(60_000);
      return;
    }
    if (!this.stopped) this.schedule(Math.min(next ?? Number.POSITIVE_INFINITY, this.createdDue) - this.now());
  }
}
