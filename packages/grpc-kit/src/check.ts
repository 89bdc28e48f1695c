import { healthV1 } from "@gateway/protos";
import { createClient } from "./client.js";
import type { GrpcTls } from "./tls.js";

/** The health status of `service` ("" for the whole server) at `address`; over mutual TLS with `tls`. */
export async function checkHealth(address: string, service = "", timeoutMs = 1_000, tls?: GrpcTls): Promise<string> {
  const client = createClient(healthV1, address, { deadlineMs: timeoutMs, name: address, tls });
  try {
    const res = await client.Check({ service });
    return res.status;
  } finally {
    client.close();
  }
}
