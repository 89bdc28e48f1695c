import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLogger } from "@gateway/logger";
import { createRegistry } from "@gateway/metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth, createClient, GrpcServer, readTls, type GrpcTls } from "./index.js";
import { echoContract } from "./testdata/echo.js";

// Mutual TLS between the gateway's processes (docs/decisions/0230): two CAs made by
// the project's own script, a server of the first, and clients of every kind.
const CERTS_SCRIPT = fileURLToPath(new URL("../../../scripts/certs.sh", import.meta.url));
const TOKEN = randomBytes(32).toString("hex");
const root = mkdtempSync(join(tmpdir(), "grpc-kit-tls-"));
const ours = join(root, "ours");
const theirs = join(root, "theirs");
const files = (dir: string, name: string) => ({
  GRPC_TLS_CA: join(dir, "ca.crt"),
  GRPC_TLS_CERT: join(dir, `${name}.crt`),
  GRPC_TLS_KEY: join(dir, `${name}.key`),
});
const tlsOf = (dir: string, name: string) => readTls(files(dir, name)) as GrpcTls;

let server: GrpcServer;
let address: string;
let healthAddress: string;
let served = 0;

beforeAll(async () => {
  for (const dir of [ours, theirs]) execFileSync("bash", [CERTS_SCRIPT, "--dir", dir], { stdio: "pipe" });
  server = new GrpcServer({
    logger: createLogger({ service: "echo", level: "silent" }),
    registry: createRegistry("tls"),
    serviceToken: TOKEN,
    tls: tlsOf(ours, "ledger"),
  });
  server.add(echoContract, {
    Carry: (stream) => stream.end(),
    async Say(req, ctx) {
      served++;
      return { text: req.text.toUpperCase(), request_id: ctx.requestId };
    },
    async Collect() {
      return { text: "", request_id: "" };
    },
    async Count() {},
  });
  address = `127.0.0.1:${await server.listen("127.0.0.1", 0)}`;
  healthAddress = `127.0.0.1:${await server.listenHealth("127.0.0.1", 0)}`;
}, 60_000);

afterAll(async () => {
  await server?.shutdown(1_000);
  rmSync(root, { recursive: true, force: true });
});

/** A call's outcome: the answer's text, or the error's contract code. */
async function say(tls: GrpcTls | undefined, to = address, token: string | null = TOKEN): Promise<string> {
  const client = createClient(echoContract, to, { deadlineMs: 2_000, name: "echo", tls, ...(token ? { serviceToken: token } : {}) });
  try {
    return (await client.Say({ text: "hi", sleep_ms: 0, fail_with: "" })).text;
  } catch (err) {
    return `error:${(err as { code?: string }).code}`;
  } finally {
    client.close();
  }
}

describe("gRPC over mutual TLS", () => {
  it("answers a client with a certificate of the same CA and the service token", async () => {
    // Dialled by loopback IP, the client names `localhost` in TLS: an IP as the server
    // name is not allowed (RFC 6066) and Node warns about it (DEP0123).
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(w.code ?? w.message);
    process.on("warning", onWarning);
    try {
      expect(await say(tlsOf(ours, "edge"))).toBe("HI");
      expect(await checkHealth(address, "", 2_000, tlsOf(ours, "jobs"))).toBe("SERVING");
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).not.toContain("DEP0123");
  });

  it("refuses a plaintext client, and one with a certificate of another CA, before any handler runs", async () => {
    const before = served;
    expect(await say(undefined)).toBe("error:unavailable");
    expect(await say(tlsOf(theirs, "edge"))).toBe("error:unavailable");
    // Trusting our CA is not enough: the server wants a client certificate it signed.
    const stranger = tlsOf(theirs, "edge");
    expect(await say({ ...stranger, ca: readFileSync(join(ours, "ca.crt")) })).toBe("error:unavailable");
    expect(served).toBe(before);
  });

  it("the client refuses a server whose certificate another CA signed", async () => {
    const impostor = new GrpcServer({
      logger: createLogger({ service: "impostor", level: "silent" }),
      registry: createRegistry("impostor"),
      serviceToken: TOKEN,
      tls: tlsOf(theirs, "ledger"),
    });
    impostor.add(echoContract, {
      Carry: (stream) => stream.end(),
      async Say() {
        return { text: "stolen", request_id: "" };
      },
      async Collect() {
        return { text: "", request_id: "" };
      },
      async Count() {},
    });
    const port = await impostor.listen("127.0.0.1", 0);
    try {
      expect(await say(tlsOf(ours, "edge"), `127.0.0.1:${port}`)).toBe("error:unavailable");
    } finally {
      await impostor.shutdown(1_000);
    }
  });

  it("TLS is the first factor, not the only one: a client of the CA without the service token is refused", async () => {
    expect(await say(tlsOf(ours, "edge"), address, randomBytes(32).toString("hex"))).toBe("error:unavailable");
    expect(await say(tlsOf(ours, "edge"), address, null)).toBe("error:unavailable");
  });

  it("the plaintext health listener answers the health service and nothing else", async () => {
    expect(await checkHealth(healthAddress)).toBe("SERVING");
    const client = createClient(echoContract, healthAddress, { deadlineMs: 2_000, serviceToken: TOKEN });
    try {
      await expect(client.Say({ text: "hi", sleep_ms: 0, fail_with: "" })).rejects.toMatchObject({ cause: { code: 12 } });
    } finally {
      client.close();
    }
  });
});

describe("readTls", () => {
  it("none set is plaintext; a file that is missing, a key of another certificate, or a certificate of another CA fail naming the variable", () => {
    expect(readTls({})).toBeUndefined();
    expect(() => readTls({ ...files(ours, "ledger"), GRPC_TLS_CERT: join(root, "nope.crt") })).toThrow(/^GRPC_TLS_CERT: cannot read .*nope\.crt \(ENOENT\)$/);
    expect(() => readTls({ ...files(ours, "ledger"), GRPC_TLS_KEY: join(ours, "jobs.key") })).toThrow("GRPC_TLS_KEY: is not the key of GRPC_TLS_CERT");
    expect(() => readTls({ ...files(ours, "ledger"), GRPC_TLS_CA: join(theirs, "ca.crt") })).toThrow("GRPC_TLS_CERT: is not signed by GRPC_TLS_CA");
    expect(() => readTls({ ...files(ours, "ledger"), GRPC_TLS_CA: join(ours, "ledger.key") })).toThrow("GRPC_TLS_CA: not a PEM certificate");
    expect(() => readTls({ GRPC_TLS_CA: join(ours, "ca.crt") })).toThrow("all three or none");
  });
});
