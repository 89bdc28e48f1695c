#!/usr/bin/env node
// Container health check for gRPC services: exits 0 when the standard health
// service reports SERVING. Usage: grpc-health-probe <host:port> [service]
import { checkHealth } from "./check.js";

const [address, service = ""] = process.argv.slice(2);
if (!address) {
  console.error("usage: grpc-health-probe <host:port> [service]");
  process.exit(2);
}
checkHealth(address, service, 2_000).then(
  (status) => {
    console.log(status);
    process.exit(status === "SERVING" ? 0 : 1);
  },
  (err: Error) => {
    console.error(err.message);
    process.exit(1);
  },
);
