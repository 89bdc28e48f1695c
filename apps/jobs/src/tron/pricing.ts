/**
 * Quote price in integer units of USD 0.0001 (docs/decisions/0101):
 *
 *   cost = base + ceil(energy × duration_seconds × per_mega_energy_hour / (1 000 000 × 3 600))
 *
 * i.e. a fixed part per lease plus `per_mega_energy_hour` units for every
 * million energy held for an hour, prorated by the second and rounded up to
 * a whole unit. Exact integer arithmetic (bigint), never floats.
 */
export type LeasePricing = { baseUnits: number; unitsPerMegaEnergyHour: number };

const MEGA_ENERGY_SECONDS = 1_000_000n * 3_600n;

export function leaseCostUnits(pricing: LeasePricing, energy: number, durationSeconds: number): bigint {
  const variable = BigInt(energy) * BigInt(durationSeconds) * BigInt(pricing.unitsPerMegaEnergyHour);
  return BigInt(pricing.baseUnits) + (variable + MEGA_ENERGY_SECONDS - 1n) / MEGA_ENERGY_SECONDS;
}
