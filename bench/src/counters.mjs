// Preloaded into a service (NODE_OPTIONS=--import) by src/counts.ts: counts
// JSON.parse calls, in the edge the express router layers matched and run, and
// the KiB the JavaScript heap allocated. Each SIGUSR2 writes the totals so far to $COUNTS_DIR/<service>-<pid>.json.
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { GCProfiler, getHeapStatistics } from "node:v8";

const dir = process.env.COUNTS_DIR;
if (dir) {
  const service = basename(dirname(dirname(process.argv[1] ?? "unknown")));
  const counts = { jsonParse: 0, layersMatched: 0, layersRun: 0, heapKiB: 0 };
  // Allocated = what the used heap grew by between collections (and since the last one).
  let gc = new GCProfiler();
  gc.start();
  let lastUsed = getHeapStatistics().used_heap_size;
  let allocated = 0;
  const readAllocations = () => {
    for (const { beforeGC, afterGC } of gc.stop().statistics) {
      allocated += beforeGC.heapStatistics.usedHeapSize - lastUsed;
      lastUsed = afterGC.heapStatistics.usedHeapSize;
    }
    const used = getHeapStatistics().used_heap_size;
    allocated += used - lastUsed;
    lastUsed = used;
    counts.heapKiB = Math.round(allocated / 1024);
    gc = new GCProfiler();
    gc.start();
  };
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
  process.on("SIGUSR2", () => {
    readAllocations();
    writeFileSync(join(dir, `${service}-${process.pid}.json`), JSON.stringify(counts));
  });
}
