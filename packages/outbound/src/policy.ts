import { lookup as dnsLookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import { isLoopbackAddress, isPrivateAddress } from "./addresses.js";

/**
 * What a customer-supplied URL may reach. Built by `egressPolicy` (the one place
 * the testing knobs are read), never by hand.
 * - `allowPrivate`: any address (local testing only: `ALLOW_PRIVATE_TARGETS=true`).
 * - `allowHttpLoopback`: loopback addresses, and plain http to them even when
 *   `requireHttps` (local testing only: `CALLBACK_ALLOW_HTTP_LOOPBACK=true`).
 * - `requireHttps`: only https URLs.
 * - `refuseCredentials`: no `user:password@` in the URL.
 */
export type EgressPolicy = { allowPrivate: boolean; allowHttpLoopback?: boolean; requireHttps?: boolean; refuseCredentials?: boolean };

export type EgressRules = {
  /** `ALLOW_PRIVATE_TARGETS`: any address, and plain http to it (local testing only; the services refuse it in production). */
  allowPrivateTargets?: boolean;
  /** `CALLBACK_ALLOW_HTTP_LOOPBACK`: loopback addresses, and plain http to them (local testing only). */
  allowHttpLoopback?: boolean;
  /** The contract asks for https (job callbacks, conversation webhooks). */
  requireHttps?: boolean;
  /** The contract refuses credentials in the URL (job callbacks). */
  refuseCredentials?: boolean;
};

/**
 * The one egress policy: what a customer-supplied URL may reach, from the
 * use's contract rules and the two testing knobs. Every call to a customer URL
 * (job callbacks, push and reply webhooks, conversation webhooks, BYOK provider
 * base URLs) is checked against a policy made here (docs/decisions/0204).
 * `ALLOW_PRIVATE_TARGETS` opens every address and plain http with it;
 * `CALLBACK_ALLOW_HTTP_LOOPBACK` opens loopback only, plain http included.
 */
export function egressPolicy(rules: EgressRules = {}): EgressPolicy {
  const open = rules.allowPrivateTargets === true;
  return {
    allowPrivate: open,
    allowHttpLoopback: open || rules.allowHttpLoopback === true,
    requireHttps: rules.requireHttps === true && !open,
    refuseCredentials: rules.refuseCredentials === true,
  };
}

/**
 * Where the operator's own URLs may point (for example `TELEGRAM_API_BASE`): the
 * operator configured them, so any address. Never for a URL a customer chose.
 */
export const OPERATOR_EGRESS: EgressPolicy = Object.freeze({ allowPrivate: true });

export type UrlCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

/** Why an address is refused under a policy, or null when it may be reached. */
export function refuseAddress(address: string, policy: EgressPolicy): string | null {
  if (policy.allowPrivate) return null;
  if (policy.allowHttpLoopback && isLoopbackAddress(address)) return null;
  return isPrivateAddress(address) ? "private_address" : null;
}

function hostOf(url: URL): string {
  // URL keeps IPv6 literals in brackets.
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

async function resolve(host: string): Promise<string[]> {
  if (isIP(host)) return [host];
  const found = await dnsLookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

/**
 * Validates a URL before it is stored or called: http(s) only (https when
 * required, no credentials when refused), and every address its host resolves
 * to allowed by the policy. The scheme rules are decided before DNS is asked,
 * so a name that does not resolve cannot slip past them.
 * The check is repeated at connect time (see `guardedLookup`), so a DNS answer
 * that changes between the check and the call cannot reach a private address.
 */
export async function checkUrl(raw: string, policy: EgressPolicy): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "invalid_url" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: "unsupported_scheme" };
  if (policy.refuseCredentials && (url.username || url.password)) return { ok: false, reason: "credentials_in_url" };
  const host = hostOf(url);
  if (!host) return { ok: false, reason: "invalid_url" };
  // Plain http where https is required and no loopback exception applies: refused without asking DNS.
  if (policy.requireHttps && url.protocol !== "https:" && !policy.allowHttpLoopback) return { ok: false, reason: "https_required" };
  // Plain http under `requireHttps` is allowed only to loopback, which a name that does not resolve is not shown to be.
  const httpNeedsLoopback = policy.requireHttps === true && url.protocol !== "https:";
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return { ok: false, reason: httpNeedsLoopback ? "https_required" : "dns_failed" };
  }
  if (addresses.length === 0) return { ok: false, reason: httpNeedsLoopback ? "https_required" : "dns_failed" };
  for (const address of addresses) {
    const refused = refuseAddress(address, policy);
    if (refused) return { ok: false, reason: refused };
  }
  if (httpNeedsLoopback) {
    const loopbackOnly = policy.allowHttpLoopback && addresses.every(isLoopbackAddress);
    if (!loopbackOnly) return { ok: false, reason: "https_required" };
  }
  return { ok: true, url, addresses };
}

/**
 * A `lookup` for sockets (undici `connect.lookup`, `net.connect`) that resolves
 * the name and refuses to connect when any address is refused by the policy:
 * DNS is checked at the moment of connecting, so rebinding cannot slip past.
 */
export function guardedLookup(policy: EgressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const refused = addresses.find((address) => refuseAddress(address, policy) !== null);
        if (refused !== undefined || addresses.length === 0) {
          const error = Object.assign(new Error(`refused to connect to ${hostname}: not a public address`), { code: "EGRESS_REFUSED" });
          callback(error as NodeJS.ErrnoException, "", 0);
          return;
        }
        const entries = addresses.map((address) => ({ address, family: isIP(address) }));
        const wanted = options.family === 4 || options.family === 6 ? entries.filter((e) => e.family === options.family) : entries;
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`no address of family ${options.family} for ${hostname}`), { code: "ENOTFOUND" }), "", 0);
          return;
        }
        if (options.all) (callback as unknown as (e: null, a: typeof wanted) => void)(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}
