export { isLoopbackAddress, isPrivateAddress } from "./addresses.js";
export { MAX_DELIVERY_ATTEMPTS, nextStep, type AttemptStep, type RetryRule } from "./attempts.js";
export { backoffDelayMs } from "./backoff.js";
export { closeAgents, deliver, guardedAgent, type DeliveryRequest, type DeliveryResult } from "./deliver.js";
export {
  DELIVERY_DUE,
  DeliveryLoop,
  type AttemptRecord,
  type DeliveryClaim,
  type DeliveryLoopOptions,
  type DeliveryState,
  type DeliveryStore,
  type Outgoing,
  type Skip,
} from "./delivery-loop.js";
export { checkUrl, egressPolicy, guardedLookup, OPERATOR_EGRESS, refuseAddress, type EgressPolicy, type EgressRules, type UrlCheck } from "./policy.js";
export { signBody, verifySignature } from "./signature.js";
export { postSigned, type SignedPost } from "./signed-post.js";
