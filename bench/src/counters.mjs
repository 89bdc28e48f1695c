// Preloaded into a service (NODE_OPTIONS=--import) by src/counts.ts: counts
// JSON.parse calls, and in the edge the express router layers matched and run.
// Each SIGUSR2 writes the totals so far to $COUNTS_DIR/<service>-<pid>.json.
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

const dir = process.env.COUNTS_DIR;
if (dir) {
  const service = basename(dirname(dirname(process.argv[1] ?? "unknown")));
  const counts = { jsonParse: 0, layersMatched: 0, layersRun: 0 };
  const parse = JSON.parse;
  JSON.parse = function (...args) {
    counts.jsonParse++;
    return parse.apply(this, args);
  };
  try {
    const express = createRequire(process.argv[1]).resolve("express");
    const Layer = createRequire(express)("router/lib/layer.js");
    const { match, handleRequest, handleError } = Layer.prototype;
    Layer.prototype.match = function (...args) {
      counts.layersMatched++;
      return match.apply(this, args);
    };
    Layer.prototype.handleRequest = function (...args) {
      counts.layersRun++;
      return handleRequest.apply(this, args);
    };
    Layer.prototype.handleError = function (...args) {
      counts.layersRun++;
      return handleError.apply(this, args);
    };
  } catch {
    // not an express service
  }
  process.on("SIGUSR2", () => writeFileSync(join(dir, `${service}-${process.pid}.json`), JSON.stringify(counts)));
}
