// The keyring lives in @gateway/secrets (shared with messaging); re-exported for this service's imports.
export { DEV_ENCRYPTION_KEYS, KEY_ID_PATTERN, KeyringError, parseKeyring, usesDevelopmentKey, type Keyring } from "@gateway/secrets";
