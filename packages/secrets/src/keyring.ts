/**
 * The keys that encrypt secrets at rest, from ENCRYPTION_KEYS:
 * `<key id>:<base64 of 32 bytes>`, comma-separated. The first key encrypts every
 * new or rotated credential; the others only decrypt what was sealed with them,
 * so the encryption key can be rotated without downtime (docs/decisions/0015).
 */
export type Keyring = {
  /** The key id new credentials are sealed with. */
  currentId: string;
  /** Every configured key by id (the current one included). */
  keys: ReadonlyMap<string, Buffer>;
};

export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * A fixed key for local development and tests only. The service refuses to start
 * with it in production (see env.ts).
 */
export const DEV_ENCRYPTION_KEYS = "dev:TfrisvJZs+kZbi/c7u9lrX/hLyuzhTjcOllNHAvzlB8=";

export class KeyringError extends Error {
  override readonly name = "KeyringError";
}

/**
 * Parses ENCRYPTION_KEYS. Errors name the position and the key id, never key
 * material, so they are safe to print.
 */
export function parseKeyring(value: string): Keyring {
  const entries = value
    .split(",")
    .map((e) => e.trim())
    .filter((e) => e.length > 0);
  if (entries.length === 0) throw new KeyringError("needs at least one key: <key id>:<base64 of 32 bytes>");
  const keys = new Map<string, Buffer>();
  entries.forEach((entry, i) => {
    const at = entry.indexOf(":");
    const id = at > 0 ? entry.slice(0, at) : "";
    const material = at > 0 ? entry.slice(at + 1) : "";
    if (!KEY_ID_PATTERN.test(id)) throw new KeyringError(`entry ${i + 1}: expected <key id>:<base64>, the id being 1-32 of A-Z a-z 0-9 _ -`);
    if (keys.has(id)) throw new KeyringError(`entry ${i + 1}: key id ${id} appears twice`);
    const key = BASE64.test(material) ? Buffer.from(material, "base64") : Buffer.alloc(0);
    if (key.length !== 32) throw new KeyringError(`key ${id}: must be the base64 encoding of exactly 32 bytes`);
    keys.set(id, key);
  });
  return { currentId: entries[0]!.slice(0, entries[0]!.indexOf(":")), keys };
}

/**
 * Key material the project has published: the development key, and the example
 * keys docker-compose.yml and deploy/base/config.yaml carried before
 * docs/decisions/0182. Anyone can read them, so production refuses them all.
 */
const SHIPPED_KEY_MATERIAL = [
  DEV_ENCRYPTION_KEYS.slice("dev:".length),
  "Z94FChHbeVQ6pzIi874kNfxL8vIeVAWCYazZZhiYMfY=",
  "dKGyJh6JNudI0Ii+dFSU3RedBqAH9Vgw91KOTkdNnmI=",
  "CRy1nUeDXnGD0MqanhcQ6B5xTs0R5Fu3mpJgLio0K7w=",
].map((m) => Buffer.from(m, "base64"));

/** Does the keyring contain a key the project ships (by material, whatever its id)? */
export function usesDevelopmentKey(keyring: Keyring): boolean {
  return [...keyring.keys.values()].some((k) => SHIPPED_KEY_MATERIAL.some((shipped) => k.equals(shipped)));
}

/**
 * What is wrong with an ENCRYPTION_KEYS value for a service's env schema, or
 * null: a parse error (safe to print), or the development key in production.
 */
export function keyringProblem(value: string, production: boolean): string | null {
  try {
    const keyring = parseKeyring(value);
    return production && usesDevelopmentKey(keyring)
      ? "must be set in production (the development key and the example keys shipped with the project are refused; scripts/gen-secrets.sh prints new ones)"
      : null;
  } catch (err) {
    if (err instanceof KeyringError) return err.message;
    throw err;
  }
}
