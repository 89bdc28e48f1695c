import { withSlash } from "./provider.js";

/**
 * Reads delegations from a TRON node's HTTP API (docs/decisions/0102):
 * `wallet/getdelegatedresourcev2` {fromAddress, toAddress, visible} lists the
 * TRX (in sun) staked for energy and delegated from → to; `wallet/getaccountresource`
 * gives the network's TotalEnergyLimit and TotalEnergyWeight, which turn staked
 * TRX into energy: energy = frozen_sun / 10^6 × TotalEnergyLimit / TotalEnergyWeight.
 * `wallet/gettransactionbyid` and `walletsolidity/gettransactioninfobyid` confirm one
 * delegation transaction a provider reported (docs/decisions/0106).
 * What decides a capture is read from the solidity API (`walletsolidity/`: the last
 * irreversible block, about 19 blocks, a minute, behind the head), never from the latest
 * block, which a fork can still undo (docs/decisions/0245). java-tron serves it on its own
 * port (TRON_SOLIDITY_URL); TronGrid on the same host as `wallet/`.
 */
export type DelegationCheck = { kind: "energy"; energy: number } | { kind: "unreachable"; reason: string };

/**
 * The delegation transactions a provider reported, checked one by one
 * (docs/decisions/0106): `energy` counts only those that are, on chain, a
 * successful `DelegateResourceContract` of ENERGY to the receiver in an irreversible block;
 * `rejected` says why the others did not count (not found yet, not in a block
 * yet, failed, another contract, resource or receiver).
 */
export type TransactionCheck =
  | { kind: "energy"; energy: number; confirmed: string[]; rejected: { txid: string; reason: string }[] }
  | { kind: "unreachable"; reason: string };

/** The chain's head block number (`wallet/getnowblock`). */
export type HeadCheck = { kind: "head"; block: number } | { kind: "unreachable"; reason: string };

/**
 * The `DelegateResourceContract`s of ENERGY to a receiver in blocks `from`..head
 * (`wallet/getblockbylimitnext`, at most SCAN_MAX_BLOCKS): the reconciliation's window
 * (docs/decisions/0245). Candidates only: `delegatedByTransactions` confirms them.
 */
export type DelegationScan = { kind: "scanned"; txids: string[]; head: number } | { kind: "unreachable"; reason: string };

export type TronNode = {
  delegatedEnergy(from: string, to: string): Promise<DelegationCheck>;
  delegatedByTransactions(txids: string[], receiver: string): Promise<TransactionCheck>;
  head(): Promise<HeadCheck>;
  delegationsTo(receiver: string, fromBlock: number): Promise<DelegationScan>;
};

/** Blocks per `getblockbylimitnext` call (java-tron's limit), and the most one scan reads (3 s a block: 50 minutes). */
export const SCAN_PAGE_BLOCKS = 100;
export const SCAN_MAX_BLOCKS = 1_000;

type Delegated = { delegatedResource?: { from?: string; to?: string; frozen_balance_for_energy?: number }[] };
export type Transaction = {
  txID?: string;
  ret?: { contractRet?: string }[];
  raw_data?: {
    contract?: { type?: string; parameter?: { value?: { owner_address?: string; receiver_address?: string; balance?: number; resource?: string } } }[];
  };
};
export type TransactionInfo = { id?: string; blockNumber?: number; result?: string };
type Resources = { TotalEnergyLimit?: number; TotalEnergyWeight?: number };
type Block = { block_header?: { raw_data?: { number?: number } }; transactions?: Transaction[] };

export class HttpTronNode implements TronNode {
  constructor(private readonly options: { baseUrl: string; solidityUrl?: string | undefined; timeoutMs: number; fetch?: typeof fetch }) {}

  private async post<T>(path: string, body: unknown): Promise<T> {
    const doFetch = this.options.fetch ?? fetch;
    const base = path.startsWith("walletsolidity/") ? (this.options.solidityUrl ?? this.options.baseUrl) : this.options.baseUrl;
    const res = await doFetch(new URL(path, withSlash(base)), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    return (await res.json()) as T;
  }

  /** sun staked for energy → energy, at the network's current ratio (as the network computes it). */
  private async energyOf(sun: bigint, account: string): Promise<number> {
    if (sun === 0n) return 0;
    const resources = await this.post<Resources>("wallet/getaccountresource", { address: account, visible: true });
    const limit = BigInt(Math.trunc(resources.TotalEnergyLimit ?? 0));
    const weight = BigInt(Math.trunc(resources.TotalEnergyWeight ?? 0));
    if (weight <= 0n) throw new Error("node reported no TotalEnergyWeight");
    return Number((sun * limit) / (weight * 1_000_000n));
  }

  async delegatedByTransactions(txids: string[], receiver: string): Promise<TransactionCheck> {
    try {
      const confirmed: string[] = [];
      const rejected: { txid: string; reason: string }[] = [];
      let sun = 0n;
      for (const txid of [...new Set(txids)]) {
        const [tx, info] = await Promise.all([
          this.post<Transaction>("wallet/gettransactionbyid", { value: txid, visible: true }),
          this.post<TransactionInfo>("walletsolidity/gettransactioninfobyid", { value: txid }),
        ]);
        const verdict = judgeDelegation(txid, tx, info, receiver);
        if (typeof verdict === "string") rejected.push({ txid, reason: verdict });
        else {
          confirmed.push(txid);
          sun += verdict;
        }
      }
      return { kind: "energy", energy: await this.energyOf(sun, receiver), confirmed, rejected };
    } catch (err) {
      return { kind: "unreachable", reason: (err as Error).name === "TimeoutError" ? "timeout" : (err as Error).message.slice(0, 200) };
    }
  }

  async head(): Promise<HeadCheck> {
    try {
      const block = await this.post<Block>("wallet/getnowblock", {});
      const number = block.block_header?.raw_data?.number;
      if (typeof number !== "number") return { kind: "unreachable", reason: "node reported no head block" };
      return { kind: "head", block: number };
    } catch (err) {
      return { kind: "unreachable", reason: (err as Error).name === "TimeoutError" ? "timeout" : (err as Error).message.slice(0, 200) };
    }
  }

  async delegationsTo(receiver: string, fromBlock: number): Promise<DelegationScan> {
    try {
      const head = await this.head();
      if (head.kind === "unreachable") return head;
      const end = Math.min(head.block, fromBlock + SCAN_MAX_BLOCKS - 1);
      const txids: string[] = [];
      for (let start = fromBlock; start <= end; start += SCAN_PAGE_BLOCKS) {
        const page = await this.post<{ block?: Block[] }>("wallet/getblockbylimitnext", {
          startNum: start,
          endNum: Math.min(end + 1, start + SCAN_PAGE_BLOCKS),
          visible: true,
        });
        for (const block of page.block ?? []) {
          for (const tx of block.transactions ?? []) {
            const contract = tx.raw_data?.contract?.[0];
            const value = contract?.parameter?.value;
            if (tx.txID && contract?.type === "DelegateResourceContract" && value?.resource === "ENERGY" && value.receiver_address === receiver) {
              txids.push(tx.txID.toLowerCase());
            }
          }
        }
      }
      return { kind: "scanned", txids: [...new Set(txids)], head: head.block };
    } catch (err) {
      return { kind: "unreachable", reason: (err as Error).name === "TimeoutError" ? "timeout" : (err as Error).message.slice(0, 200) };
    }
  }

  async delegatedEnergy(from: string, to: string): Promise<DelegationCheck> {
    try {
      const delegated = await this.post<Delegated>("walletsolidity/getdelegatedresourcev2", { fromAddress: from, toAddress: to, visible: true });
      const sun = (delegated.delegatedResource ?? [])
        .filter((d) => d.from === from && d.to === to)
        .reduce((sum, d) => sum + BigInt(Math.trunc(d.frozen_balance_for_energy ?? 0)), 0n);
      return { kind: "energy", energy: await this.energyOf(sun, to) };
    } catch (err) {
      return { kind: "unreachable", reason: (err as Error).name === "TimeoutError" ? "timeout" : (err as Error).message.slice(0, 200) };
    }
  }
}

/**
 * The sun a transaction delegates as energy to `receiver`, or why it does not
 * count: it must be known to the node, in an irreversible block, not failed, and
 * exactly one `DelegateResourceContract` of ENERGY to the receiver (a node that
 * does not know a hash answers `{}`; the solidity API answers `{}` too, without
 * `blockNumber`, until the block is irreversible).
 */
export function judgeDelegation(txid: string, tx: Transaction, info: TransactionInfo, receiver: string): bigint | string {
  if (!tx.txID) return "not found on chain (yet)";
  if (tx.txID.toLowerCase() !== txid.toLowerCase()) return "the node answered for another transaction";
  const contracts = tx.raw_data?.contract ?? [];
  if (contracts.length !== 1 || contracts[0]?.type !== "DelegateResourceContract") return "not a DelegateResourceContract";
  const value = contracts[0].parameter?.value ?? {};
  // Protobuf JSON leaves out the enum's default (BANDWIDTH): only an explicit ENERGY counts.
  if (value.resource !== "ENERGY") return `delegates ${value.resource ?? "BANDWIDTH"}, not ENERGY`;
  if (value.receiver_address !== receiver) return "delegates to another receiver";
  if (tx.ret?.[0]?.contractRet !== "SUCCESS") return `contract result ${tx.ret?.[0]?.contractRet ?? "missing"}`;
  if (typeof info.blockNumber !== "number") return "not in an irreversible block yet";
  if (info.result === "FAILED") return "failed on chain";
  const balance = value.balance;
  if (typeof balance !== "number" || !Number.isSafeInteger(balance) || balance <= 0) return "no delegated balance";
  return BigInt(balance);
}
