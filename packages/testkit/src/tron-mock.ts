import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Local stand-ins for the third parties of live energy leases: two energy
 * rental providers — the generic one (`POST /orders`, idempotent by
 * `Idempotency-Key`) and itrx.io's API as its public documentation describes
 * it (`POST /api/v1/frontend/order` signed with HMAC-SHA256, `GET
 * /api/v1/frontend/order/query` by `serial` as the English page says, or also by
 * `out_trade_no` as the Chinese one does, `GET /api/v1/frontend/index-data`; errors
 * as `{errno, message}` or as HTTP 400 `detail`/per-field bodies) — and a TRON node
 * (`wallet/getdelegatedresourcev2`, `wallet/getaccountresource`,
 * `wallet/gettransactionbyid`, `wallet/getnowblock`, `wallet/getblockbylimitnext`,
 * and the solidity API's `walletsolidity/gettransactioninfobyid` and
 * `walletsolidity/getdelegatedresourcev2`). A fulfilled order shows up on the node as
 * TRX staked for energy and delegated from the provider's address to the
 * receiver; an itrx order also as its `DelegateResourceContract` transaction, in
 * a new block. itrx delegates on its own once an order is placed (unless told to
 * wait for queries), whether or not its answer reached the client.
 */
export const MOCK_DELEGATOR = "THr3dxkeAbY3y5B3QGremvZw5NbrCPR6tR";
/** The address the itrx mock delegates from. */
export const MOCK_ITRX_DELEGATOR = "TKzxdSv2FZKQrEqkKVgp5DcwEXBEKMg2Ax";
export const MOCK_ITRX_API_KEY = "B433BFF1CDE7450AA38A56BEAC690DD4";
export const MOCK_ITRX_API_SECRET = "mock-itrx-secret-0285A2741D0E76E2E187260EB23E51851D48403A";
/** The itrx mock's own errno values (itrx publishes no errno table; see docs/decisions/0105). */
export const MOCK_ITRX_ERRNO = { badRequest: 400, balance: 4001, noEnergy: 4002, notFound: 404 } as const;
/** The network figures the mock node reports (energy per staked TRX = limit / weight). */
export const MOCK_TOTAL_ENERGY_LIMIT = 180_000_000_000;
export const MOCK_TOTAL_ENERGY_WEIGHT = 19_000_000_000;
/** The mock chain's head when it starts; each delegation the itrx mock makes is in the next block. */
export const MOCK_FIRST_BLOCK = 60_000_000;

export type TronMockBehaviour = {
  /** Refuse every order with this HTTP status. */
  providerFailStatus?: number;
  /** When an order's delegation appears on the node: at once (default), after N node polls (counted while this is set), or never. */
  delegation?: "immediate" | "never" | { afterPolls: number };
  itrx?: ItrxMockBehaviour;
};

export type ItrxMockBehaviour = {
  /** Refuse every new order with this errno and message (HTTP 200, as the API answers errors). */
  refuse?: { errno: number; message: string } | undefined;
  /** The account balance in sun; an order costing more is refused (errno 4001, "insufficient balance"). */
  balanceSun?: number;
  /** When a placed order delegates: at once (default), after N queries of it, or never (it stays in status 30). */
  fulfilment?: "immediate" | "never" | { afterQueries: number };
  /** Ends orders without delegating, with this status (0 closed on timeout, 41 refunded, 43 abnormal). */
  endStatus?: 0 | 41 | 43 | undefined;
  /** Answer every request this late (ms): a client with a shorter timeout sees no answer. */
  delayMs?: number;
  /** Answer every request with this HTTP status and no JSON (an outage). */
  httpStatus?: number | undefined;
  /** Split a fulfilled order into this many delegations (large orders are split). */
  splits?: number;
  /** Place the next N orders but cut the connection instead of answering (the client never learns the serial). */
  dropOrderAnswers?: number;
  /**
   * How refusals are answered: `errno` (HTTP 200 `{errno, message}`, the default) or `detail`
   * (HTTP 400 `{detail: "Insufficient funds"}`, `{detail: "API not found"}`, or per-field
   * arrays such as `{"energy_amount": ["…"]}` for a bad order), as itrx's API answers errors.
   */
  errors?: "errno" | "detail";
  /**
   * What the order query takes: `serial` only (the English and Russian pages: anything
   * else is HTTP 400 `{"serial": ["This field is required."]}`), or `serial_or_out_trade_no`
   * (the Chinese page). The default is `serial`.
   */
  orderQuery?: "serial" | "serial_or_out_trade_no";
  /** `minimum_order_energy` of `GET /api/v1/frontend/index-data`, and the smallest order taken (default 32 000). */
  minimumOrderEnergy?: number;
};

export type ItrxMockOrder = {
  serial: string;
  outTradeNo: string | undefined;
  receiver: string;
  energy: number;
  period: string;
  amountSun: number;
  status: number;
  queries: number;
  txids: string[];
};

/** A transaction the mock node knows. */
export type MockTransaction = {
  txid: string;
  type: string;
  owner: string;
  receiver: string;
  balanceSun: number;
  resource: "ENERGY" | "BANDWIDTH";
  contractRet: "SUCCESS" | "REVERT";
  inBlock: boolean;
  /** In an irreversible block (what `walletsolidity/` shows); default: when in a block. */
  solid?: boolean;
  /** Its block number (default MOCK_FIRST_BLOCK); the itrx mock's delegations each take a new block. */
  block?: number;
  failed?: boolean;
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
  /** Node paths asked, in order (`/wallet/…`, `/walletsolidity/…`). */
  nodePaths: string[];
  /** The mock chain's head block number. */
  readonly height: number;
  /** Moves the head on by `blocks` empty blocks. */
  mine(blocks: number): number;
  itrxUrl: string;
  /** itrx orders by serial, in the order they were placed (several may share an out_trade_no). */
  itrxOrders: Map<string, ItrxMockOrder>;
  /** Every itrx request received: method, path, query string and whether its signature was good. */
  itrxRequests: { method: string; path: string; query: string; body: unknown; signed: boolean }[];
  /** Places an itrx order as a client would have (for a test of a crash after ordering): it delegates as any order does. */
  placeItrxOrder(order: { outTradeNo: string; receiver: string; energy: number; period: string }): ItrxMockOrder;
  /** Transactions on the mock chain, by id. */
  transactions: Map<string, MockTransaction>;
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

function readRaw(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => resolve(""));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
  /** The generic provider's orders by receiver: a node query reads one receiver's, not every order placed. */
  const ordersTo = new Map<string, MockOrder[]>();
  /** What every generic order to a receiver delegates, and its longest duration: the answer when delegation is immediate. */
  const totalTo = new Map<string, { sun: number; seconds: number }>();
  /** Sun delegated per receiver (from MOCK_DELEGATOR), and polls seen per order. */
  const polls = new Map<string, number>();
  const orderRequests: TronMock["orderRequests"] = [];
  let seq = 0;
  let nodeCalls = 0;
  const nodePaths: string[] = [];
  let height = MOCK_FIRST_BLOCK;

  const itrxOrders = new Map<string, ItrxMockOrder>();
  const itrxRequests: TronMock["itrxRequests"] = [];
  const transactions = new Map<string, MockTransaction>();
  let itrxBalance: number | undefined;
  let droppedAnswers = 0;
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
      order = {
        id: `ord_${++seq}`,
        clientOrderId: key,
        receiver: body.receiver,
        energy: body.energy,
        durationSeconds: Number(body.duration_seconds),
        requests: 1,
      };
      orders.set(key, order);
      const mine = ordersTo.get(order.receiver) ?? [];
      mine.push(order);
      ordersTo.set(order.receiver, mine);
      const total = totalTo.get(order.receiver) ?? { sun: 0, seconds: 0 };
      totalTo.set(order.receiver, { sun: total.sun + sunFor(order.energy), seconds: Math.max(total.seconds, order.durationSeconds) });
    }
    send(res, 201, { id: order.id, status: "delegating", delegator: MOCK_DELEGATOR });
  });

  const itrxSettings = () => behaviour.itrx ?? {};
  const balanceLeft = () => itrxBalance ?? itrxSettings().balanceSun ?? 1_000_000_000_000;
  const place = (o: { outTradeNo: string | undefined; receiver: string; energy: number; period: string }): ItrxMockOrder => {
    const order: ItrxMockOrder = {
      serial: createHash("md5").update(`itrx-${++seq}`).digest("hex"),
      ...o,
      amountSun: o.energy * (o.period === "1H" ? 100 : 200),
      status: 30,
      queries: 0,
      txids: [],
    };
    itrxBalance = balanceLeft() - order.amountSun;
    itrxOrders.set(order.serial, order);
    // itrx delegates on its own: an order whose answer was lost is fulfilled all the same.
    advance(order);
    return order;
  };
  /** Moves an order on when it is looked at: delegate (write its transactions), end, or stay. */
  const advance = (order: ItrxMockOrder) => {
    if (order.status !== 30) return;
    const b = itrxSettings();
    if (b.endStatus !== undefined) {
      order.status = b.endStatus;
      return;
    }
    const f = b.fulfilment ?? "immediate";
    if (f === "never" || (f !== "immediate" && order.queries <= f.afterQueries)) return;
    const splits = Math.max(1, b.splits ?? 1);
    for (let i = 0; i < splits; i++) {
      const share = Math.floor(order.energy / splits) + (i === 0 ? order.energy % splits : 0);
      const txid = createHash("sha256").update(`${order.serial}:${i}`).digest("hex");
      transactions.set(txid, {
        txid,
        block: ++height,
        type: "DelegateResourceContract",
        owner: MOCK_ITRX_DELEGATOR,
        receiver: order.receiver,
        balanceSun: sunFor(share),
        resource: "ENERGY",
        contractRet: "SUCCESS",
        inBlock: true,
      });
      order.txids.push(txid);
    }
    order.status = 40;
  };
  const itrxOrderView = (o: ItrxMockOrder) => ({
    errno: 0,
    receive_address: o.receiver,
    order_no: o.serial,
    energy_amount: o.energy,
    pay_amount: o.status === 40 ? o.energy : 0,
    amount: o.amountSun,
    details: o.txids.map((h) => ({ delegate_hash: h, delegate_time: new Date().toISOString(), status: 20 })),
    create_time: new Date().toISOString(),
    api_name: "MOCK API",
    period: o.period === "1H" ? 0 : Number.parseInt(o.period, 10),
    status: o.status,
    refund_amount: 0,
  });

  const itrxServer = await listen(async (req, res) => {
    const raw = await readRaw(req);
    const b = itrxSettings();
    if (b.delayMs) await new Promise((r) => setTimeout(r, b.delayMs));
    const url = new URL(req.url ?? "/", "http://mock");
    const apiKey = req.headers["api-key"];
    const record = { method: req.method ?? "", path: url.pathname, query: url.search, body: tryJson(raw), signed: false };
    itrxRequests.push(record);
    if (b.httpStatus) return void res.writeHead(b.httpStatus, { "content-type": "text/html" }).end("<html>unavailable</html>");
    const detail = b.errors === "detail";
    const minimum = b.minimumOrderEnergy ?? 32_000;
    if (req.method === "GET" && url.pathname === "/api/v1/frontend/index-data") {
      // As documented: no error, but empty data for a wrong API key.
      if (apiKey !== MOCK_ITRX_API_KEY) return send(res, 200, {});
      return send(res, 200, {
        platform_avail_energy: 603_249,
        platform_max_energy: 329_009,
        minimum_order_energy: minimum,
        maximum_order_energy: 100_000_000,
        small_amount: 50_000,
        small_addition: 0.6,
        usdt_energy_need_old: 32_000,
        usdt_energy_need_new: 65_000,
        tiered_pricing: [
          { period: 0, price: 100 },
          { period: 1, price: 200 },
        ],
        balance: balanceLeft(),
      });
    }
    if (apiKey !== MOCK_ITRX_API_KEY) return send(res, 403, { errno: 403, message: "API-KEY invalid" });
    if (req.method === "GET" && url.pathname === "/api/v1/frontend/order/query") {
      const serial = url.searchParams.get("serial");
      const outTradeNo = (b.orderQuery ?? "serial") === "serial_or_out_trade_no" ? url.searchParams.get("out_trade_no") : null;
      if (!serial && !outTradeNo) {
        if ((b.orderQuery ?? "serial") === "serial") return send(res, 400, { serial: ["This field is required."] });
        return send(res, 200, { errno: MOCK_ITRX_ERRNO.badRequest, message: "serial or out_trade_no required" });
      }
      const order = serial ? itrxOrders.get(serial) : [...itrxOrders.values()].find((o) => o.outTradeNo === outTradeNo);
      if (!order) return send(res, 200, { errno: MOCK_ITRX_ERRNO.notFound, message: "order not found" });
      order.queries += 1;
      advance(order);
      return send(res, 200, itrxOrderView(order));
    }
    if (req.method !== "POST" || url.pathname !== "/api/v1/frontend/order") {
      return detail ? send(res, 400, { detail: "API not found" }) : send(res, 404, { errno: 404, message: "not found" });
    }
    // The documented signature: hex HMAC-SHA256(secret, "<TIMESTAMP>&<JSON with sorted keys, no spaces>").
    const body = tryJson(raw) as Record<string, unknown> | undefined;
    const ts = String(req.headers.timestamp ?? "");
    const given = String(req.headers.signature ?? "");
    const canonical = body
      ? JSON.stringify(
          Object.fromEntries(
            Object.keys(body)
              .sort()
              .map((k) => [k, body[k]]),
          ),
        )
      : "";
    const expected = createHmac("sha256", MOCK_ITRX_API_SECRET).update(`${ts}&${canonical}`).digest("hex");
    const fresh = /^\d{10}$/.test(ts) && Math.abs(Date.now() / 1000 - Number(ts)) <= 300;
    record.signed = fresh && given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
    if (!record.signed) return send(res, 403, { errno: 403, message: "signature error" });
    const refuse = (errno: number, message: string, fields?: Record<string, string[]>) =>
      detail ? send(res, 400, fields ?? { detail: message }) : send(res, 200, { errno, message });
    if (
      !body ||
      typeof body.energy_amount !== "number" ||
      !Number.isInteger(body.energy_amount) ||
      typeof body.receive_address !== "string" ||
      typeof body.period !== "string"
    ) {
      return refuse(MOCK_ITRX_ERRNO.badRequest, "energy_amount, period and receive_address are required", {
        energy_amount: ["This field is required."],
        period: ["This field is required."],
        receive_address: ["This field is required."],
      });
    }
    if (!/^(1H|([1-9]|[12]\d|30)D)$/.test(body.period)) {
      return refuse(MOCK_ITRX_ERRNO.badRequest, "period must be 1H or 1D-30D", { period: [`"${body.period}" is not a valid choice.`] });
    }
    if (body.energy_amount < minimum) {
      return refuse(MOCK_ITRX_ERRNO.badRequest, `energy_amount below the minimum order (${minimum})`, {
        energy_amount: [`Ensure this value is greater than or equal to ${minimum}.`],
      });
    }
    if (b.refuse) return refuse(b.refuse.errno, b.refuse.message);
    const cost = body.energy_amount * (body.period === "1H" ? 100 : 200);
    if (cost > balanceLeft()) return detail ? send(res, 400, { detail: "Insufficient funds" }) : refuse(MOCK_ITRX_ERRNO.balance, "insufficient balance");
    const order = place({
      outTradeNo: typeof body.out_trade_no === "string" ? body.out_trade_no : undefined,
      receiver: body.receive_address,
      energy: body.energy_amount,
      period: body.period,
    });
    if ((b.dropOrderAnswers ?? 0) > droppedAnswers) {
      droppedAnswers += 1;
      req.socket.destroy();
      return;
    }
    send(res, 200, { errno: 0, serial: order.serial, amount: order.amountSun, balance: balanceLeft() });
  });

  /** A transaction as `wallet/gettransactionbyid` (and a block's `transactions`) show it. */
  const renderTx = (tx: MockTransaction) => {
    const value = {
      owner_address: tx.owner,
      receiver_address: tx.receiver,
      balance: tx.balanceSun,
      ...(tx.resource === "ENERGY" ? { resource: "ENERGY" } : {}),
    };
    return {
      ret: [{ contractRet: tx.contractRet }],
      txID: tx.txid,
      raw_data: { contract: [{ parameter: { value, type_url: `type.googleapis.com/protocol.${tx.type}` }, type: tx.type }], timestamp: Date.now() },
    };
  };

  const node = await listen(async (req, res) => {
    const body = (await readJson(req)) as Record<string, unknown> | undefined;
    nodeCalls += 1;
    nodePaths.push(req.url ?? "");
    if (req.url === "/wallet/gettransactionbyid" || req.url === "/wallet/gettransactioninfobyid" || req.url === "/walletsolidity/gettransactioninfobyid") {
      const tx = transactions.get(String(body?.value ?? "").toLowerCase());
      // A real node answers {} for a hash it does not know (or not yet in a block, for the info).
      if (!tx) return send(res, 200, {});
      if (req.url === "/wallet/gettransactionbyid") return send(res, 200, renderTx(tx));
      if (!tx.inBlock) return send(res, 200, {});
      // The solidity API knows a transaction only once its block is irreversible.
      if (req.url.startsWith("/walletsolidity/") && tx.solid === false) return send(res, 200, {});
      return send(res, 200, {
        id: tx.txid,
        blockNumber: tx.block ?? MOCK_FIRST_BLOCK,
        blockTimeStamp: Date.now(),
        receipt: { net_usage: 280 },
        ...(tx.failed ? { result: "FAILED", resMessage: "6661696c6564" } : {}),
      });
    }
    if (req.url === "/wallet/getnowblock") return send(res, 200, { blockID: "00", block_header: { raw_data: { number: height } } });
    if (req.url === "/wallet/getblockbylimitnext") {
      const start = Number(body?.startNum);
      const end = Math.min(Number(body?.endNum), height + 1);
      if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end - start > 100) return send(res, 200, { Error: "bad range" });
      const block = [];
      for (let n = start; n < end; n++) {
        const txs = [...transactions.values()].filter((t) => t.inBlock && (t.block ?? MOCK_FIRST_BLOCK) === n).map(renderTx);
        block.push({ blockID: n.toString(16), block_header: { raw_data: { number: n } }, ...(txs.length > 0 ? { transactions: txs } : {}) });
      }
      return send(res, 200, { block });
    }
    if (req.url === "/wallet/getaccountresource")
      return send(res, 200, { TotalEnergyLimit: MOCK_TOTAL_ENERGY_LIMIT, TotalEnergyWeight: MOCK_TOTAL_ENERGY_WEIGHT });
    if (req.url !== "/wallet/getdelegatedresourcev2" && req.url !== "/walletsolidity/getdelegatedresourcev2") return send(res, 404, { Error: "not found" });
    const solidOnly = req.url.startsWith("/walletsolidity/");
    const from = body?.fromAddress;
    const to = body?.toAddress;
    // As a node answers: ONE entry for the pair, the sum of what is delegated from → to (and
    // the latest expiry), however many delegations made it up. One entry per delegation made
    // the answer grow with every lease of a soak (387 KB after 7,000 leases), and the soak's
    // process and jobs with it (docs/decisions/0236).
    let sun = 0;
    let expires = 0;
    if (from === MOCK_ITRX_DELEGATOR) {
      for (const tx of transactions.values()) {
        if (tx.owner === from && tx.receiver === to && tx.resource === "ENERGY" && tx.inBlock && !tx.failed && !(solidOnly && tx.solid === false))
          sun += tx.balanceSun;
      }
    }
    const delegation = behaviour.delegation ?? "immediate";
    if (from === MOCK_DELEGATOR && typeof to === "string" && delegation === "immediate") {
      // Every order shows at once: the running total, not a loop over the receiver's orders.
      const total = totalTo.get(to);
      if (total) {
        sun += total.sun;
        expires = Date.now() + total.seconds * 1000;
      }
    } else if (from === MOCK_DELEGATOR && typeof to === "string" && delegation !== "never") {
      // Polls are counted only here, for `{ afterPolls }`.
      for (const order of ordersTo.get(to) ?? []) {
        polls.set(order.id, (polls.get(order.id) ?? 0) + 1);
        if (visible(order)) {
          sun += sunFor(order.energy);
          expires = Math.max(expires, Date.now() + order.durationSeconds * 1000);
        }
      }
    }
    // A real node answers {} when there is nothing delegated.
    if (sun === 0) return send(res, 200, {});
    send(res, 200, {
      delegatedResource: [{ from, to, frozen_balance_for_energy: sun, ...(expires > 0 ? { expire_time_for_energy: expires } : {}) }],
    });
  });

  return {
    providerUrl: provider.url,
    nodeUrl: node.url,
    orders,
    orderRequests,
    get nodeCalls() {
      return nodeCalls;
    },
    nodePaths,
    get height() {
      return height;
    },
    mine(blocks) {
      height += blocks;
      return height;
    },
    itrxUrl: itrxServer.url,
    itrxOrders,
    itrxRequests,
    placeItrxOrder: (o) => place(o),
    transactions,
    set(next) {
      behaviour = { ...behaviour, ...next };
      if (next.itrx) {
        itrxBalance = undefined;
        droppedAnswers = 0;
      }
    },
    async close() {
      for (const s of [provider.server, node.server, itrxServer.server]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
