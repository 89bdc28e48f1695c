export { DEV_ENCRYPTION_KEYS, KEY_ID_PATTERN, KeyringError, keyringProblem, parseKeyring, usesDevelopmentKey, type Keyring } from "./keyring.js";
export { CredentialError, openCredential, sealCredential, type SealedCredential } from "./seal.js";
export { addReseal, emptyReseal, resealRows, type ResealResult } from "./reseal.js";
