import { readFileSync } from "node:fs";
import { createPrivateKey, X509Certificate } from "node:crypto";
import * as grpc from "@grpc/grpc-js";

/**
 * Mutual TLS between the gateway's processes (docs/decisions/0230): one CA, and for
 * each process a certificate it signed, used by the process's server and by its
 * clients. A server accepts only clients that present a certificate of the CA; a
 * client accepts only a server whose certificate the CA signed for the host it
 * dialled. The service token stays as the second factor (0183).
 */
export type GrpcTls = {
  /** PEM of the CA every peer's certificate must chain to. */
  ca: Buffer;
  /** PEM of this process's certificate (chain). */
  cert: Buffer;
  /** PEM of its private key. */
  key: Buffer;
};

/** The three variables of `grpcTlsEnvShape` (@gateway/config): paths to PEM files. */
export type GrpcTlsEnv = {
  GRPC_TLS_CA?: string | undefined;
  GRPC_TLS_CERT?: string | undefined;
  GRPC_TLS_KEY?: string | undefined;
};

/** A TLS file that is missing or wrong: the message names the variable, never a key. */
export class GrpcTlsError extends Error {
  override readonly name = "GrpcTlsError";
}

function read(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new GrpcTlsError(`${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/**
 * Reads the CA, certificate and key the environment names; `undefined` when none
 * is set (plaintext: the configuration already refused that in production, and half
 * a set). Fails at start-up, naming the variable, when a file is unreadable, is not
 * what it should be, the key is not the certificate's, or the CA did not sign it.
 */
export function readTls(env: GrpcTlsEnv): GrpcTls | undefined {
  const { GRPC_TLS_CA: caPath, GRPC_TLS_CERT: certPath, GRPC_TLS_KEY: keyPath } = env;
  if (!caPath && !certPath && !keyPath) return undefined;
  if (!caPath || !certPath || !keyPath) throw new GrpcTlsError("GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY: all three or none");
  const tls = { ca: read("GRPC_TLS_CA", caPath), cert: read("GRPC_TLS_CERT", certPath), key: read("GRPC_TLS_KEY", keyPath) };
  checkTls(tls);
  return tls;
}

const parse = (variable: string, pem: Buffer) => {
  try {
    return new X509Certificate(pem);
  } catch {
    throw new GrpcTlsError(`${variable}: not a PEM certificate`);
  }
};

/** The checks of `readTls` on PEMs at hand. */
export function checkTls(tls: GrpcTls): void {
  const ca = parse("GRPC_TLS_CA", tls.ca);
  const cert = parse("GRPC_TLS_CERT", tls.cert);
  let key: ReturnType<typeof createPrivateKey>;
  try {
    key = createPrivateKey(tls.key);
  } catch {
    throw new GrpcTlsError("GRPC_TLS_KEY: not a PEM private key");
  }
  if (!cert.checkPrivateKey(key)) throw new GrpcTlsError("GRPC_TLS_KEY: is not the key of GRPC_TLS_CERT");
  if (!cert.verify(ca.publicKey)) throw new GrpcTlsError("GRPC_TLS_CERT: is not signed by GRPC_TLS_CA");
  const now = Date.now();
  if (Date.parse(cert.validTo) <= now || Date.parse(cert.validFrom) > now) {
    throw new GrpcTlsError(`GRPC_TLS_CERT: not valid now (valid from ${cert.validFrom} to ${cert.validTo})`);
  }
}

/** A server's credentials: TLS that requires a client certificate of the CA, or plaintext without `tls`. */
export function serverCredentials(tls: GrpcTls | undefined): grpc.ServerCredentials {
  if (!tls) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(tls.ca, [{ private_key: tls.key, cert_chain: tls.cert }], true);
}

/** A client's credentials: TLS with this process's certificate, trusting only the CA, or plaintext without `tls`. */
export function channelCredentials(tls: GrpcTls | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(tls.ca, tls.key, tls.cert);
}
