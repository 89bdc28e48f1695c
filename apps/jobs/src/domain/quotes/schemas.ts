import { z } from "zod";
import { isTronAddress } from "../../tron/address.js";

export const ENERGY_MIN = 1_000;
export const ENERGY_MAX = 5_000_000;
export const DURATION_MIN = 300;
export const DURATION_MAX = 86_400;

/** int64 fields arrive from gRPC as decimal strings (longs=String). */
const int64 = (name: string, min: number, max: number) =>
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const n = typeof v === "number" ? v : /^-?\d{1,16}$/.test(v) ? Number(v) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({ code: "custom", message: `${name} must be an integer from ${min} to ${max}` });
      return z.NEVER;
    }
    return n;
  });

export const Receiver = z.string().refine(isTronAddress, "receiver must be a TRON address (base58check, T...)");
export const Energy = int64("energy", ENERGY_MIN, ENERGY_MAX);
export const Duration = int64("duration_seconds", DURATION_MIN, DURATION_MAX);
export { Id as TenantId } from "@gateway/contract";
