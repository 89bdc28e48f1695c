import { hash, randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: reject the tail so every character is equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export type GeneratedKey = { plaintext: string; prefix: string; hash: string };

/**
 * `gw_<10 chars>_<32 chars>`: the prefix (shown in lists) is the first part; the
 * whole is ~250 bits of randomness, so a fast hash (SHA-256) is the right one
 * to store: there is nothing to brute-force.
 */
export function generateKey(): GeneratedKey {
  const prefix = `gw_${randomBase62(10)}`;
  const plaintext = `${prefix}_${randomBase62(32)}`;
  return { plaintext, prefix, hash: hashKey(plaintext) };
}

/** Once per API-key request: the one-shot `hash()` (no Hash object) costs under half of `createHash()`. */
export function hashKey(plaintext: string): string {
  return hash("sha256", plaintext, "hex");
}

const KEY_SHAPE = /^gw_[0-9A-Za-z]{10}_[0-9A-Za-z]{32}$/;

/** Cheap shape check before any lookup: garbage never reaches the cache or the database. */
export function looksLikeKey(value: string): boolean {
  return KEY_SHAPE.test(value);
}
