import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { readTls, type GrpcTls } from "@gateway/grpc-kit";
import { REPO_ROOT } from "./root.js";

/** The processes `scripts/certs.sh` makes a certificate for. */
export const CERT_NAMES = ["edge", "ledger", "managed-ai", "jobs", "messaging", "files"] as const;
export type CertName = (typeof CERT_NAMES)[number];

/** A CA and a certificate per gateway process, made by `scripts/certs.sh` (docs/decisions/0230). */
export type TestCerts = {
  dir: string;
  /** GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY of a process. */
  env(name: CertName): { GRPC_TLS_CA: string; GRPC_TLS_CERT: string; GRPC_TLS_KEY: string };
  /** The PEMs of a process, for a kit client (`tls` of createClient, checkHealth). */
  tls(name: CertName): GrpcTls;
};

function certsIn(dir: string): TestCerts {
  const env = (name: CertName) => ({ GRPC_TLS_CA: join(dir, "ca.crt"), GRPC_TLS_CERT: join(dir, `${name}.crt`), GRPC_TLS_KEY: join(dir, `${name}.key`) });
  return { dir, env, tls: (name) => readTls(env(name)) as GrpcTls };
}

/** Runs the project's script: a new CA and its certificates in `dir` (made when missing). */
export function makeCerts(dir: string): TestCerts {
  execFileSync("bash", [join(REPO_ROOT, "scripts", "certs.sh"), "--dir", dir], { stdio: ["ignore", "ignore", "pipe"] });
  return certsIn(dir);
}

/** Complete, and valid for at least another day. */
function usable(dir: string): boolean {
  try {
    if (!CERT_NAMES.every((n) => existsSync(join(dir, `${n}.key`)))) return false;
    return CERT_NAMES.every((n) => Date.parse(new X509Certificate(readFileSync(join(dir, `${n}.crt`))).validTo) > Date.now() + 86_400_000);
  } catch {
    return false;
  }
}

let shared: TestCerts | undefined;

/**
 * The test kit's CA and certificates, made once per machine and user in the temporary
 * directory and shared by every stack and test process (making them takes about a
 * second). Made in a directory of its own and renamed into place, so test processes
 * starting together never see half a set.
 */
export function testCerts(): TestCerts {
  if (shared) return shared;
  const dir = join(tmpdir(), `gateway-testkit-certs-${userInfo().uid}`);
  if (!usable(dir)) {
    const fresh = mkdtempSync(`${dir}-new-`);
    makeCerts(fresh);
    if (existsSync(dir) && !usable(dir)) rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(fresh, dir);
    } catch {
      // Another process put its set in place first: use that one.
      rmSync(fresh, { recursive: true, force: true });
    }
  }
  shared = certsIn(dir);
  return shared;
}
