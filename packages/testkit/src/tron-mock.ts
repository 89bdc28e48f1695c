import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Local stand-ins for the two third parties of live energy leases: an energy
 * rental provider (`POST /orders`, idempotent by `Idempotency-Key`) and a TRON
 * node (`wallet/getdelegatedresourcev2`, `wallet/getaccountresource`). A
 * fulfilled order shows up on the node as TRX staked for energy and delegated
 * from the provider's address to the receiver.
 */
export const MOCK_DELEGATOR = "THr3dxkeAbY3y5B3QGremvZw5NbrCPR6tR";
/** The network figures the mock node reports (energy per staked TRX = limit / weight). */
export const MOCK_TOTAL_ENERGY_LIMIT = 180_000_000_000;
export const MOCK_TOTAL_ENERGY_WEIGHT = 19_000_000_000;

export type TronMockBehaviour = {
  /** Refuse every order with this HTTP status. */
  providerFailStatus?: number;
  /** When an order's delegation appears on the node: at once (default), after N node polls, or never. */
  delegation?: "immediate" | "never" | { afterPolls: number };
};

export type MockOrder = { id: string; clientOrderId: string; receiver: string; energy: number; durationSeconds: number; requests: number };

export type TronMock = {
  providerUrl: string;
  nodeUrl: string;
  /** Distinct orders by client order id. */
  orders: Map<string, MockOrder>;
  /** Every order request received (repeats included). */
  orderRequests: { idempotencyKey: string | undefined; body: unknown }[];
  /** Node calls received. */
  nodeCalls: number;
  set(behaviour: TronMockBehaviour): void;
  close(): Promise<void>;
};

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => resolve(undefined));
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        resolve(undefined);
      }
    });
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  const server = createServer((req, res) => {
    res.on("error", () => undefined);
    handler(req, res).catch(() => send(res, 500, { error: "mock failure" }));
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export async function startTronMock(initial: TronMockBehaviour = {}): Promise<TronMock> {
  let behaviour: TronMockBehaviour = { ...initial };
  const orders = new Map<string, MockOrder>();
  /** Sun delegated per receiver (from MOCK_DELEGATOR), and polls seen per order. */
  const polls = new Map<string, number>();
  const orderRequests: TronMock["orderRequests"] = [];
  let seq = 0;
  let nodeCalls = 0;

  const sunFor = (energy: number) => Math.ceil((energy * MOCK_TOTAL_ENERGY_WEIGHT * 1_000_000) / MOCK_TOTAL_ENERGY_LIMIT);
  const visible = (order: MockOrder): boolean => {
    const d = behaviour.delegation ?? "immediate";
    if (d === "immediate") return true;
    if (d === "never") return false;
    return (polls.get(order.id) ?? 0) > d.afterPolls;
  };

  const provider = await listen(async (req, res) => {
    const body = (await readJson(req)) as Record<string, unknown> | undefined;
    if (req.method !== "POST" || req.url !== "/orders") return send(res, 404, { error: "not found" });
    const key = req.headers["idempotency-key"] as string | undefined;
    orderRequests.push({ idempotencyKey: key, body });
    if (behaviour.providerFailStatus) return send(res, behaviour.providerFailStatus, { error: "order_rejected", message: "no energy available" });
    if (!body || typeof body.receiver !== "string" || typeof body.energy !== "number" || !key) return send(res, 400, { error: "bad order" });
    let order = orders.get(key);
    if (order) order.requests += 1;
    else {
      order = { id: `ord_${++seq}`, clientOrderId: key, receiver: body.receiver, energy: body.energy, durationSeconds: Number(body.duration_seconds), requests: 1 };
      orders.set(key, order);
    }
    send(res, 201, { id: order.id, status: "delegating", delegator: MOCK_DELEGATOR });
  });

  const node = await listen(async (req, res) => {
    const body = (await readJson(req)) as Record<string, unknown> | undefined;
    nodeCalls += 1;
    if (req.url === "/wallet/getaccountresource") return send(res, 200, { TotalEnergyLimit: MOCK_TOTAL_ENERGY_LIMIT, TotalEnergyWeight: MOCK_TOTAL_ENERGY_WEIGHT });
    if (req.url !== "/wallet/getdelegatedresourcev2") return send(res, 404, { Error: "not found" });
    const from = body?.fromAddress;
    const to = body?.toAddress;
    const delegatedResource = [];
    for (const order of orders.values()) {
      if (from !== MOCK_DELEGATOR || order.receiver !== to) continue;
      polls.set(order.id, (polls.get(order.id) ?? 0) + 1);
      if (visible(order)) {
        delegatedResource.push({ from: MOCK_DELEGATOR, to: order.receiver, frozen_balance_for_energy: sunFor(order.energy), expire_time_for_energy: Date.now() + order.durationSeconds * 1000 });
      }
    }
    // A real node answers {} when there is nothing delegated.
    send(res, 200, delegatedResource.length > 0 ? { delegatedResource } : {});
  });

  return {
    providerUrl: provider.url,
    nodeUrl: node.url,
    orders,
    orderRequests,
    get nodeCalls() {
      return nodeCalls;
    },
    set(next) {
      behaviour = { ...behaviour, ...next };
    },
    async close() {
      for (const s of [provider.server, node.server]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
