// The per-call costs removed in issue 28, session 24 (docs/benchmarks/optimizations.md),
// measured alone: each pair is the old way against the new, in µs per operation, the
// median of 5 runs. With COLD=1 an 8 MB array is read between operations (as in a
// service, where each call finds its code and data out of the CPU caches).
//   node bench/src/micro.mjs
import { createHash, hash, timingSafeEqual } from "node:crypto";
import { IncomingMessage } from "node:http";

const cold = process.env.COLD === "1";
const junk = new Float64Array(1 << 20);
const thrash = () => {
  let s = 0;
  for (let i = 0; i < junk.length; i += 8) s += junk[i];
  return s;
};
const N = cold ? 2_000 : 100_000;

function time(fn) {
  const runs = [];
  for (let r = 0; r < 5; r++) {
    let total = 0n;
    if (cold) {
      for (let i = 0; i < N; i++) {
        thrash();
        const t = process.hrtime.bigint();
        fn(i);
        total += process.hrtime.bigint() - t;
      }
    } else {
      const t = process.hrtime.bigint();
      for (let i = 0; i < N; i++) fn(i);
      total = process.hrtime.bigint() - t;
    }
    runs.push(Number(total) / N / 1000);
  }
  return runs.sort((a, b) => a - b)[2].toFixed(3);
}

const sink = new Array(1024);

// A call started ten frames deep, as grpc-js's makeUnaryRequest is.
const deep = (n, f) => (n === 0 ? f() : deep(n - 1, f) + 0);
const withStack = () =>
  deep(10, () => {
    sink[0] = new Error();
    return 1;
  });
const withoutStack = () =>
  deep(10, () => {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    sink[0] = new Error();
    Error.stackTraceLimit = limit;
    return 1;
  });

const token = "t".repeat(48);
const expected = createHash("sha256").update(token).digest();
const expectedHex = Buffer.from(hash("sha256", token, "hex"), "latin1");

class Context {
  constructor(requestId, deadline) {
    this.requestId = requestId;
    this.deadline = deadline;
    this.controller = undefined;
  }
  get signal() {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }
}
const requestProto = Object.create(IncomingMessage.prototype);
function AppRequest(...args) {
  return Reflect.construct(IncomingMessage, args, AppRequest);
}
AppRequest.prototype = requestProto;
const socket = { on() {}, readable: true };

const rows = [
  ["grpc-js call start: new Error() (stack captured)", withStack, "with Error.stackTraceLimit = 0", withoutStack],
  [
    "service token: createHash().update().digest() + timingSafeEqual",
    () => timingSafeEqual(createHash("sha256").update(token, "utf8").digest(), expected),
    "hash(…, 'hex') + timingSafeEqual",
    () => timingSafeEqual(Buffer.from(hash("sha256", token, "hex"), "latin1"), expectedHex),
  ],
  [
    "API key hash: createHash().update().digest('hex')",
    () => createHash("sha256").update(token).digest("hex"),
    "hash('sha256', key)",
    () => hash("sha256", token),
  ],
  [
    "call context: object literal with a getter",
    (i) => {
      let controller;
      sink[i & 1023] = {
        requestId: "r",
        get signal() {
          controller ??= new AbortController();
          return controller.signal;
        },
        deadline: undefined,
      };
    },
    "class instance (getter on the prototype)",
    (i) => {
      sink[i & 1023] = new Context("r", undefined);
    },
  ],
  [
    "request: new IncomingMessage + Object.setPrototypeOf",
    (i) => {
      const req = new IncomingMessage(socket);
      Object.setPrototypeOf(req, requestProto);
      sink[i & 1023] = req;
    },
    "born with the prototype (setPrototypeOf a no-op)",
    (i) => {
      const req = new AppRequest(socket);
      Object.setPrototypeOf(req, requestProto);
      sink[i & 1023] = req;
    },
  ],
];
console.log(`µs per operation${cold ? " (cold caches)" : ""}, median of 5 runs of ${N}`);
for (const [oldName, oldFn, newName, newFn] of rows) console.log(`${time(oldFn).padStart(7)}  ${oldName}\n${time(newFn).padStart(7)}  ${newName}`);
