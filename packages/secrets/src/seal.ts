import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { Keyring } from "./keyring.js";

/**
 * Secrets at rest (provider keys, bot tokens, webhook secrets): AES-256-GCM with a random 96-bit nonce per
 * encryption and a 128-bit tag. The stored blob is nonce || ciphertext || tag;
 * the id of the key that sealed it is stored beside it, and the associated data
 * binds it to its owner (a blob copied onto another row does not open): each
 * caller names its own context, e.g. `gateway.<service>.<table>.<field>:<row id>`.
 */
const ALGORITHM = "aes-256-gcm";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export type SealedCredential = { ciphertext: Uint8Array<ArrayBuffer>; keyId: string };

export class CredentialError extends Error {
  override readonly name = "CredentialError";
}

/** Encrypts with the keyring's current key. */
export function sealCredential(keyring: Keyring, plaintext: string, context: string): SealedCredential {
  const key = keyring.keys.get(keyring.currentId);
  if (!key) throw new CredentialError(`current key ${keyring.currentId} is missing from the keyring`);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv(ALGORITHM, key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  // A copy with its own ArrayBuffer (Buffers may share a pooled one), as Prisma's Bytes expects.
  return { ciphertext: new Uint8Array(Buffer.concat([nonce, body, cipher.getAuthTag()])), keyId: keyring.currentId };
}

/**
 * Decrypts with the key the blob names. Fails (without saying anything about the
 * content) when that key is not configured or the blob, its key id or its context
 * do not match.
 */
export function openCredential(keyring: Keyring, sealed: { ciphertext: Uint8Array; keyId: string }, context: string): string {
  const known = opened.get(sealed.ciphertext);
  if (known && known.keyring === keyring && known.keyId === sealed.keyId && known.context === context && known.bytes.equals(sealed.ciphertext)) {
    return known.plaintext;
  }
  const plaintext = decrypt(keyring, sealed, context);
  opened.set(sealed.ciphertext, { keyring, keyId: sealed.keyId, context, bytes: Buffer.from(sealed.ciphertext), plaintext });
  return plaintext;
}

/*
 * Blobs already opened, by the blob's own object: a row held by a cache (managed-ai's
 * catalog opens its upstream's key on every metered call) is decrypted once, not per
 * use. Setting up an AES-GCM decipher per call was 5.6 % of managed-ai's CPU at load
 * (docs/benchmarks/optimizations.md, session 23). An entry lives as
 * long as the blob's object: a re-read row is a new object and is opened again, so a
 * rotated or changed key is never served from here; its bytes are compared too (a
 * blob changed in place is decrypted and authenticated again). The plaintext stays in the memory
 * that already holds the blob and the keyring that opens it.
 */
const opened = new WeakMap<Uint8Array, { keyring: Keyring; keyId: string; context: string; bytes: Buffer; plaintext: string }>();

function decrypt(keyring: Keyring, sealed: { ciphertext: Uint8Array; keyId: string }, context: string): string {
  const key = keyring.keys.get(sealed.keyId);
  if (!key) throw new CredentialError(`key ${sealed.keyId} is not in ENCRYPTION_KEYS`);
  const blob = Buffer.from(sealed.ciphertext);
  if (blob.length < NONCE_BYTES + TAG_BYTES) throw new CredentialError("sealed credential is truncated");
  const decipher = createDecipheriv(ALGORITHM, key, blob.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(blob.subarray(blob.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(blob.subarray(NONCE_BYTES, blob.length - TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    throw new CredentialError(`sealed credential does not authenticate with key ${sealed.keyId}`);
  }
}
