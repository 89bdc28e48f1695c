#!/usr/bin/env node
// Container health check for gRPC services: exits 0 when the standard health
// service reports SERVING. Usage: grpc-health-probe <host:port> [service]
// Over mutual TLS when the environment names the process's TLS files
// (GRPC_TLS_CA, GRPC_TLS_CERT, GRPC_TLS_KEY, as the service itself reads them:
// a container's health check runs with the container's environment).
import { checkHealth } from "./check.js";
import { readTls } from "./tls.js";

const [address, service = ""] = process.argv.slice(2);
if (!address) {
  console.error("usage: grpc-health-probe <host:port> [service]   (mutual TLS when GRPC_TLS_CA, GRPC_TLS_CERT and GRPC_TLS_KEY are set)");
  process.exit(2);
}
const run = async () => checkHealth(address, service, 2_000, readTls(process.env));
run().then(
  (status) => {
    console.log(status);
    process.exit(status === "SERVING" ? 0 : 1);
  },
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
