import { healthV1 } from "@gateway/protos";
import { createClient } from "./client.js";

/** The health status of `service` ("" for the whole server) at `address`. */
export async function checkHealth(address: string, service = "", timeoutMs = 1_000): Promise<string> {
  const client = createClient(healthV1, address, { deadlineMs: timeoutMs, name: address });
  try {
    const res = await client.Check({ service });
    return res.status;
  } finally {
    client.close();
  }
}
