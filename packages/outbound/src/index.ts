export { isLoopbackAddress, isPrivateAddress } from "./addresses.js";
export { backoffDelayMs } from "./backoff.js";
export { closeAgents, deliver, guardedAgent, type DeliveryRequest, type DeliveryResult } from "./deliver.js";
export { checkUrl, guardedLookup, refuseAddress, type EgressPolicy, type UrlCheck } from "./policy.js";
export { signBody, verifySignature } from "./signature.js";
