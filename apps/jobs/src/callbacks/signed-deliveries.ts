import type { Keyring } from "@gateway/secrets";
import type { Logger } from "@gateway/logger";
import { Counter, type Registry } from "@gateway/metrics";
import { DeliveryLoop, MAX_DELIVERY_ATTEMPTS, type DeliveryClaim, type DeliveryStore } from "@gateway/outbound";
import type { PrismaClient } from "../generated/prisma/client.js";
import { callbackPolicy, type CallbackSettings } from "./target.js";

const BATCH = 20;

/** What a dispatcher of signed deliveries (job callbacks, account webhooks) is given. */
export type DispatcherOptions = {
  prisma: PrismaClient;
  keyring: Keyring;
  logger: Logger;
  /** The callbacks' settings: the same egress rules, timeout and backoff for every signed delivery (CONTRACT.md sections 9, 13). */
  settings: CallbackSettings;
  pollMs: number;
  /** While polls find nothing, their interval doubles up to this (retries wake it when due). Default `pollMs`. */
  maxPollMs?: number;
  registry?: Registry;
  random?: () => number;
};

/**
 * A table of signed deliveries on the one delivery loop (docs/decisions/0203): the signed
 * POST (no redirects, the callbacks' egress rules), retried after
 * `backoffDelayMs(attempt, CALLBACK_BASE_DELAY_MS)`, exhausted after the 8th attempt; a
 * counter of attempts by resulting state, and the component's logger, handed to its store.
 */
export function signedDeliveries<C extends DeliveryClaim>(
  options: DispatcherOptions,
  spec: {
    component: string;
    name: string;
    metric: { name: string; help: string };
    /** A settled delivery frees the next of its kind at once (a job's events go in order). */
    settledFreesNext?: boolean;
    store: (log: Logger, attempts?: Counter) => DeliveryStore<C>;
  },
): DeliveryLoop<C> {
  const log = options.logger.child({ component: spec.component });
  const attempts = options.registry
    ? new Counter({ name: spec.metric.name, help: spec.metric.help, labelNames: ["state"], registers: [options.registry] })
    : undefined;
  return new DeliveryLoop({
    store: spec.store(log, attempts),
    policy: callbackPolicy(options.settings),
    timeoutMs: options.settings.timeoutMs,
    retry: { maxAttempts: MAX_DELIVERY_ATTEMPTS, baseDelayMs: options.settings.baseDelayMs, random: options.random },
    batchSize: BATCH,
    maxRedirects: 0,
    pollMs: options.pollMs,
    maxPollMs: options.maxPollMs,
    ...(spec.settledFreesNext ? { settledFreesNext: true } : {}),
    log,
    name: spec.name,
  });
}
