import { z } from "zod";

/**
 * Builders for environment variables. Each one carries its description, so the
 * documentation table is generated from the same schema that parses the values.
 */

export function str(description: string, defaultValue?: string) {
  const base = z.string().min(1);
  return (defaultValue === undefined ? base : base.default(defaultValue)).describe(description);
}

/** A secret: never printed by `redactConfig` nor in the docs' default column. */
export function secret(description: string, defaultValue?: string) {
  const base = z.string().min(1);
  return (defaultValue === undefined ? base : base.default(defaultValue)).describe(description).meta({ secret: true });
}

/** An optional secret: unset unless configured. */
export function optionalSecret(description: string) {
  return z.string().min(1).optional().describe(description).meta({ secret: true });
}

export function int(description: string, defaultValue: number, bounds: { min?: number; max?: number } = {}) {
  let base = z.coerce.number().int();
  if (bounds.min !== undefined) base = base.min(bounds.min);
  if (bounds.max !== undefined) base = base.max(bounds.max);
  return base.default(defaultValue).describe(description);
}

export function port(description: string, defaultValue: number) {
  return int(description, defaultValue, { min: 0, max: 65535 });
}

export function bool(description: string, defaultValue: boolean) {
  return z
    .enum(["true", "false", "1", "0"])
    .default(defaultValue ? "true" : "false")
    .transform((v) => v === "true" || v === "1")
    .describe(description);
}

export function url(description: string, defaultValue: string, protocols: string[]) {
  return z
    .string()
    .default(defaultValue)
    .refine(
      (value) => {
        try {
          return protocols.includes(new URL(value).protocol);
        } catch {
          return false;
        }
      },
      `must be a URL with protocol ${protocols.join(" or ")}`,
    )
    .describe(description);
}

export function oneOf<const T extends readonly [string, ...string[]]>(description: string, values: T, defaultValue: T[number]) {
  return z
    .enum(values)
    .default(defaultValue as never)
    .describe(description);
}

/** host:port of a gRPC peer. */
export function address(description: string, defaultValue: string) {
  return z
    .string()
    .default(defaultValue)
    .refine((v) => /^[A-Za-z0-9.\-_]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(v), "must be host:port")
    .describe(description);
}
