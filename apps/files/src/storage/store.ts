import type { Readable } from "node:stream";
import { ID_PATTERN } from "@gateway/contract/ids";

/**
 * Where file bytes live, by key (the file id, never a name a client chose).
 * Every method streams: no implementation holds a whole file in memory.
 */
export type BlobStore = {
  readonly kind: string;
  /**
   * Streams `body` into the store under `key`. The object becomes visible only
   * when the body has ended and was stored whole; if the body fails or `signal`
   * aborts, nothing is left under `key` and the promise rejects.
   */
  put(key: string, body: Readable, signal?: AbortSignal): Promise<void>;
  /** A stream of the object's bytes; rejects with BlobNotFound when there is none. */
  get(key: string): Promise<{ body: Readable; size: number }>;
  /** Removes the object (and any partial upload of it); removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Does a complete object exist under `key`? */
  exists(key: string): Promise<boolean>;
};

export class BlobNotFound extends Error {
  override readonly name = "BlobNotFound";
  constructor(key: string) {
    super(`no object under ${key}`);
  }
}

/** Keys are ids (`file_…`, the contract's id pattern): a key with anything else can never name a path outside the store. */
export const KEY_PATTERN = ID_PATTERN;

export function checkKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  return key;
}
