import { describe, expect, it } from "vitest";
import { AppError } from "@gateway/errors";
import { RECLAIM_ROUNDS, reserveReclaiming, type Reclaimed } from "./reclaim.js";

const short = () => new AppError("insufficient_balance", "short");

/** A reserve refused `refusals` times, and what each reclaim answers. */
function scenario(refusals: number, answers: Reclaimed[]) {
  const calls = { reserve: 0, reclaim: 0 };
  const reserve = async () => {
    if (calls.reserve++ < refusals) throw short();
    return "hold";
  };
  const reclaim = async () => answers[calls.reclaim++] ?? "kept";
  return { calls, run: () => reserveReclaiming(reserve, reclaim) };
}

describe("reserveReclaiming", () => {
  it("asks the ledger again after a reclaim that found a live allotment, even one that had nothing more to give", async () => {
    const s = scenario(1, ["kept"]);
    expect(await s.run()).toBe("hold");
    expect(s.calls).toEqual({ reserve: 2, reclaim: 1 });
  });

  it("lets a refusal stand when the tenant has no allotment, or a later reclaim gave nothing", async () => {
    const none = scenario(5, ["none"]);
    await expect(none.run()).rejects.toMatchObject({ code: "insufficient_balance" });
    expect(none.calls).toEqual({ reserve: 1, reclaim: 1 });
    const kept = scenario(5, ["kept", "kept"]);
    await expect(kept.run()).rejects.toMatchObject({ code: "insufficient_balance" });
    expect(kept.calls).toEqual({ reserve: 2, reclaim: 2 });
  });

  it("goes on while reclaims give something back, at most a few rounds", async () => {
    const s = scenario(100, ["given", "given", "given", "given", "given"]);
    await expect(s.run()).rejects.toMatchObject({ code: "insufficient_balance" });
    expect(s.calls.reserve).toBe(RECLAIM_ROUNDS + 1);
    const ok = scenario(2, ["given", "given"]);
    expect(await ok.run()).toBe("hold");
  });

  it("lets the ledger's refusal stand when the reclaim itself fails", async () => {
    await expect(
      reserveReclaiming(
        async () => {
          throw short();
        },
        async () => {
          throw new AppError("unavailable", "managed-ai unreachable");
        },
      ),
    ).rejects.toMatchObject({ code: "insufficient_balance" });
  });

  it("never reclaims on another error", async () => {
    let reclaims = 0;
    await expect(
      reserveReclaiming(
        async () => {
          throw new AppError("unavailable", "down");
        },
        async () => {
          reclaims++;
          return "given";
        },
      ),
    ).rejects.toMatchObject({ code: "unavailable" });
    expect(reclaims).toBe(0);
  });
});
