import { randomFillSync } from "node:crypto";

/** Crockford base32: no I, L, O, U. */
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** Every id matches the contract's path pattern. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
const PREFIX_PATTERN = /^[a-z][a-z0-9]{0,15}$/;

/*
 * Randomness for ids, drawn from the system's CSPRNG 4 KiB at a time (about 400 ids)
 * rather than one call per id: `randomBytes(10)` costs a call into the crypto binding
 * per id, a few percent of a metered call's CPU (docs/benchmarks/optimizations.md,
 * session 23). Every byte is used once.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/**
 * A ULID body: 10 characters of millisecond time, then 16 of randomness (80 bits).
 * Time first, so ids sort by creation and index inserts stay local.
 */
export function ulid(now: number = Date.now()): string {
  let time = now;
  let head = "";
  for (let i = 0; i < 10; i++) {
    head = ALPHABET[time % 32] + head;
    time = Math.floor(time / 32);
  }
  if (poolAt + 10 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  let tail = "";
  let acc = 0;
  let bits = 0;
  for (let end = poolAt + 10; poolAt < end; poolAt++) {
    acc = (acc << 8) | pool[poolAt]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      tail += ALPHABET[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return head + tail;
}

/** `newId("req")` → `req_01JD5Z0M3Q7W8X9Y0A1B2C3D4E`. */
export function newId(prefix: string, now?: number): string {
  if (!PREFIX_PATTERN.test(prefix)) throw new Error(`invalid id prefix: ${prefix}`);
  return `${prefix}_${ulid(now)}`;
}

export function isId(value: unknown): value is string {
  return typeof value === "string" && ID_PATTERN.test(value);
}
