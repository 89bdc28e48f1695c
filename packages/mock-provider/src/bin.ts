#!/usr/bin/env node
// A local OpenAI-compatible provider for the demo stack:
//   gateway-mock-provider --api-key sk-local-demo [--port 8090] [--host 127.0.0.1] [--models a,b]
// Prints the base URL to give an upstream (`.../v1`); Ctrl-C stops it.
import { parseArgs } from "node:util";
import { startMockProvider } from "./server.js";

const usage = "usage: gateway-mock-provider --api-key <key> [--port <port>] [--host <host>] [--models <id,id>]";

const options = {
  "api-key": { type: "string" },
  port: { type: "string", default: "0" },
  host: { type: "string", default: "127.0.0.1" },
  models: { type: "string" },
} as const;
let values: ReturnType<typeof parseArgs<{ options: typeof options; strict: true }>>["values"];
try {
  ({ values } = parseArgs({ options, strict: true }));
} catch (err) {
  console.error(`${(err as Error).message}\n${usage}`);
  process.exit(2);
}
const port = Number(values.port);
if (!values["api-key"] || !Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(usage);
  process.exit(2);
}

const provider = await startMockProvider({
  apiKey: values["api-key"],
  port,
  host: values.host,
  ...(values.models ? { models: values.models.split(",").filter(Boolean) } : {}),
});
console.log(`mock provider listening at ${provider.url}`);

const stop = () => {
  void provider.close().then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
