import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { watchDatabase } from "./service.js";

/** A database that answers `up` after `delayMs`, and the answers the watchdog reported. */
function database(up: boolean, delayMs = 0) {
  const reports: boolean[] = [];
  const pool = new EventEmitter();
  const infra = { databaseUp: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(up), delayMs)), pool };
  return { infra, reports, report: (answer: boolean) => reports.push(answer) };
}

describe("the health watchdog (docs/decisions/0009, 0200, 0309)", () => {
  it("asks the database when a probe needs an answer fresher than the last", async () => {
    const db = database(true);
    const watchdog = watchDatabase(db.infra, db.report);
    try {
      await watchdog.fresh(5_000);
      expect(db.reports).toEqual([true]);
      await watchdog.fresh(5_000); // fresh enough: no new question
      expect(db.reports).toEqual([true]);
      await watchdog.fresh(-1);
      expect(db.reports).toEqual([true, true]);
    } finally {
      watchdog.stop();
    }
  });

  it("once stopped (the shutdown says NOT_SERVING), a probe neither asks nor turns the answer back", async () => {
    const db = database(true, 20);
    const watchdog = watchDatabase(db.infra, db.report);
    const asked = watchdog.fresh(5_000); // a probe's question on its way when the shutdown begins
    watchdog.stop();
    await asked;
    await watchdog.fresh(5_000);
    await new Promise((r) => setTimeout(r, 40));
    expect(db.reports).toEqual([]);
  });
});
