// CPU per call of a unary call against one message each way on a long-lived
// bidirectional stream (grpc-js, loopback, 32 calls in flight), for the edge →
// managed-ai question of issue 21. Payloads about the size of a small InvokeRequest
// and answer; the server echoes. Client and server CPU from the OS, per call.
//   node packages/grpc-kit/bench/unary-vs-stream.mjs [calls] [concurrency]
import { fork } from "node:child_process";
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";

const raw = { requestSerialize: (b) => b, requestDeserialize: (b) => b, responseSerialize: (b) => b, responseDeserialize: (b) => b };
const service = {
  Unary: { path: "/bench.Echo/Unary", requestStream: false, responseStream: false, ...raw },
  Bidi: { path: "/bench.Echo/Bidi", requestStream: true, responseStream: true, ...raw },
};
const answer = Buffer.alloc(600, 97);

if (process.argv[2] === "server") {
  const server = new grpc.Server();
  server.addService(service, {
    Unary: (call, cb) => cb(null, Buffer.concat([call.request.subarray(0, 4), answer])),
    Bidi: (call) => call.on("data", (m) => call.write(Buffer.concat([m.subarray(0, 4), answer]))).on("end", () => call.end()),
  });
  server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (_err, port) => process.send({ port }));
} else {
  const calls = Number(process.argv[2] ?? 20000);
  const concurrency = Number(process.argv[3] ?? 32);
  const child = fork(new URL(import.meta.url).pathname, ["server"]);
  const port = await new Promise((r) => child.once("message", (m) => r(m.port)));
  const ticks = 100;
  const serverCpu = () => {
    const f = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) / ticks;
  };
  const clientCpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const Client = grpc.makeGenericClientConstructor(service, "Echo");
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const request = (id) => {
    const b = Buffer.alloc(200, 98);
    b.writeUInt32BE(id, 0);
    return b;
  };
  const unary = (id) =>
    new Promise((resolve, reject) => client.Unary(request(id), { deadline: Date.now() + 10_000 }, (err, res) => (err ? reject(err) : resolve(res))));
  let stream;
  const waiting = new Map();
  const openStream = () => {
    stream = client.Bidi();
    stream.on("error", () => undefined); // the end of the run closes it
    stream.on("data", (m) => {
      const id = m.readUInt32BE(0);
      waiting.get(id)?.(m);
      waiting.delete(id);
    });
  };
  const onStream = (id) =>
    new Promise((resolve) => {
      waiting.set(id, resolve);
      stream.write(request(id));
    });
  const run = async (label, fn, n) => {
    let next = 0;
    const c0 = clientCpu(),
      s0 = serverCpu(),
      t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) await fn(next++);
      }),
    );
    const ms = performance.now() - t0;
    const perCall = (s) => ((s * 1000) / n).toFixed(4);
    const result = { label, callsPerSecond: Math.round((n / ms) * 1000), clientMs: perCall(clientCpu() - c0), serverMs: perCall(serverCpu() - s0) };
    return result;
  };
  openStream();
  const results = [];
  // Warm-up, then A B B A.
  await run("warm", unary, 2000);
  await run("warm", onStream, 2000);
  for (const [label, fn] of [
    ["unary", unary],
    ["bidi stream", onStream],
    ["bidi stream", onStream],
    ["unary", unary],
  ])
    results.push(await run(label, fn, calls));
  for (const label of ["unary", "bidi stream"]) {
    const rs = results.filter((r) => r.label === label);
    const mean = (k) => rs.reduce((s, r) => s + Number(r[k]), 0) / rs.length;
    console.log(
      `${label}: ${mean("callsPerSecond").toFixed(0)} calls/s, CPU ms per call: client ${mean("clientMs").toFixed(4)}, server ${mean("serverMs").toFixed(4)}`,
    );
  }
  await new Promise((r) => {
    stream.once("close", r);
    stream.once("end", r);
    stream.end();
  });
  client.close();
  child.kill();
}
