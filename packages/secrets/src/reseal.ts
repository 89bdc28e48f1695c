import type { Keyring } from "./keyring.js";
import { openCredential, sealCredential, type SealedCredential } from "./seal.js";

/** What a key-rotation pass did: re-sealed now, already under the current key, could not be opened. */
export type ResealResult = { reencrypted: number; current: number; failed: string[] };

type Log = { info(fields: Record<string, unknown>, message: string): void; error(fields: Record<string, unknown>, message: string): void };

export const emptyReseal = (): ResealResult => ({ reencrypted: 0, current: 0, failed: [] });

export function addReseal(a: ResealResult, b: ResealResult): ResealResult {
  return { reencrypted: a.reencrypted + b.reencrypted, current: a.current + b.current, failed: [...a.failed, ...b.failed] };
}

/**
 * The last step of a key rotation for one kind of sealed value: each row not under
 * the keyring's current key is opened with its own key and sealed again under the
 * current one. `replace` is a compare-and-set (a concurrent write wins: it sealed
 * under the current key already). Never logs a secret, only ids and key ids.
 */
export async function resealRows<R extends { id: string; ciphertext: Uint8Array; keyId: string }>(
  keyring: Keyring,
  log: Log,
  what: string,
  rows: readonly R[],
  context: (row: R) => string,
  replace: (row: R, sealed: SealedCredential) => Promise<boolean>,
): Promise<ResealResult> {
  const result = emptyReseal();
  for (const row of rows) {
    if (row.keyId === keyring.currentId) {
      result.current += 1;
      continue;
    }
    let sealed: SealedCredential;
    try {
      sealed = sealCredential(keyring, openCredential(keyring, row, context(row)), context(row));
    } catch (err) {
      log.error({ [`${what}_id`]: row.id, key_id: row.keyId, reason: (err as Error).message }, `${what} secret not re-encrypted`);
      result.failed.push(row.id);
      continue;
    }
    if (await replace(row, sealed)) {
      result.reencrypted += 1;
      log.info({ [`${what}_id`]: row.id, from_key_id: row.keyId, to_key_id: sealed.keyId }, `${what} secret re-encrypted`);
    }
  }
  return result;
}
