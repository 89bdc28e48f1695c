import { createHash } from "node:crypto";

const ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest();

function decodeBase58(text: string): Buffer | null {
  let value = 0n;
  for (const ch of text) {
    const digit = ALPHABET.indexOf(ch);
    if (digit < 0) return null;
    value = value * 58n + BigInt(digit);
  }
  const hex = value.toString(16);
  const body = Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex");
  const zeros = text.length - text.replace(/^1+/, "").length;
  return Buffer.concat([Buffer.alloc(zeros), body]);
}

function encodeBase58(bytes: Uint8Array): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString("hex") || "0"}`);
  let out = "";
  while (value > 0n) {
    out = ALPHABET[Number(value % 58n)] + out;
    value /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}

/**
 * A TRON account address as users write it: base58check of 0x41 followed by
 * 20 bytes (34 characters starting with T), checksum verified.
 */
export function isTronAddress(text: string): boolean {
  if (!/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(text)) return false;
  const raw = decodeBase58(text);
  if (raw?.length !== 25 || raw[0] !== 0x41) return false;
  return sha256(sha256(raw.subarray(0, 21)))
    .subarray(0, 4)
    .equals(raw.subarray(21));
}

/** The address of 20 account bytes (for tests and mocks). */
export function tronAddress(account: Uint8Array): string {
  if (account.length !== 20) throw new RangeError("a TRON account is 20 bytes");
  const payload = Buffer.concat([Buffer.from([0x41]), account]);
  return encodeBase58(Buffer.concat([payload, sha256(sha256(payload)).subarray(0, 4)]));
}
