import { withSlash } from "./provider.js";

/**
 * Reads delegations from a TRON node's HTTP API (docs/decisions/0102):
 * `wallet/getdelegatedresourcev2` {fromAddress, toAddress, visible} lists the
 * TRX (in sun) staked for energy and delegated from → to; `wallet/getaccountresource`
 * gives the network's TotalEnergyLimit and TotalEnergyWeight, which turn staked
 * TRX into energy: energy = frozen_sun / 10^6 × TotalEnergyLimit / TotalEnergyWeight.
 */
export type DelegationCheck = { kind: "energy"; energy: number } | { kind: "unreachable"; reason: string };

export type TronNode = { delegatedEnergy(from: string, to: string): Promise<DelegationCheck> };

type Delegated = { delegatedResource?: { from?: string; to?: string; frozen_balance_for_energy?: number }[] };
type Resources = { TotalEnergyLimit?: number; TotalEnergyWeight?: number };

export class HttpTronNode implements TronNode {
  constructor(private readonly options: { baseUrl: string; timeoutMs: number; fetch?: typeof fetch }) {}

  private async post<T>(path: string, body: unknown): Promise<T> {
    const doFetch = this.options.fetch ?? fetch;
    const res = await doFetch(new URL(path, withSlash(this.options.baseUrl)), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  }

  async delegatedEnergy(from: string, to: string): Promise<DelegationCheck> {
    try {
      const delegated = await this.post<Delegated>("wallet/getdelegatedresourcev2", { fromAddress: from, toAddress: to, visible: true });
      const sun = (delegated.delegatedResource ?? [])
        .filter((d) => d.from === from && d.to === to)
        .reduce((sum, d) => sum + BigInt(Math.trunc(d.frozen_balance_for_energy ?? 0)), 0n);
      if (sun === 0n) return { kind: "energy", energy: 0 };
      const resources = await this.post<Resources>("wallet/getaccountresource", { address: to, visible: true });
      const limit = BigInt(Math.trunc(resources.TotalEnergyLimit ?? 0));
      const weight = BigInt(Math.trunc(resources.TotalEnergyWeight ?? 0));
      if (weight <= 0n) return { kind: "unreachable", reason: "node reported no TotalEnergyWeight" };
      return { kind: "energy", energy: Number((sun * limit) / (weight * 1_000_000n)) };
    } catch (err) {
      return { kind: "unreachable", reason: (err as Error).name === "TimeoutError" ? "timeout" : (err as Error).message.slice(0, 200) };
    }
  }
}
