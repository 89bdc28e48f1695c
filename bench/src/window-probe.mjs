// Preloaded into one service (NODE_OPTIONS=--import) to see what costs more per request
// as a long run goes on. Each SIGUSR2 toggles a measured window: the first starts it, the
// second ends it and writes into $PROBE_DIR a V8 CPU profile of the window
// (<n>.cpuprofile) and <n>.json: HTTP requests the process received, its CPU ms and GC
// pauses (ms, by kind) in the window, event-loop utilization, active handles by type,
// heap figures (PROBE_PROFILE=0: no CPU profile). PROBE_HEAP_SNAPSHOTS=1,4 also writes a heap snapshot after windows 1 and 4.
//   SOAK_EDGE_ENV='{"NODE_OPTIONS":"--import /abs/bench/src/window-probe.mjs","PROBE_DIR":"/tmp/probe"}' pnpm soak --minutes=16
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";
import { constants, PerformanceObserver, performance } from "node:perf_hooks";
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString, writeHeapSnapshot } from "node:v8";

// PROBE_V8_FLAGS: V8 flags NODE_OPTIONS does not take, e.g. "--trace-gc" (each collection and its reason on stdout).
if (process.env.PROBE_V8_FLAGS) setFlagsFromString(process.env.PROBE_V8_FLAGS);

const dir = process.env.PROBE_DIR;
if (dir) {
  let requests = 0;
  subscribe("http.server.request.start", () => requests++);
  const GC_KINDS = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
    [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
  };
  const gc = {};
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = GC_KINDS[e.detail?.kind] ?? "other";
      gc[kind] ??= { count: 0, ms: 0 };
      const g = gc[kind];
      g.count++;
      g.ms += e.duration;
    }
  }).observe({ entryTypes: ["gc"] });
  // PROBE_PROFILE=0: no CPU profile (on a loaded machine its samples count waiting as running; perf's cpu-clock does not).
  const profile = process.env.PROBE_PROFILE !== "0";
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 500 });
  let window;
  let n = 0;
  const counts = (items) => {
    const m = {};
    for (const k of items) m[k] = (m[k] ?? 0) + 1;
    return m;
  };
  process.on("SIGUSR2", () => {
    if (!window) {
      window = { at: Date.now(), requests, cpu: process.cpuUsage(), gc: structuredClone(gc), elu: performance.eventLoopUtilization() };
      if (profile) session.post("Profiler.start");
      return;
    }
    const w = window;
    window = undefined;
    // The window's figures before the profiler stops: stopping it (serializing the profile) is the probe's work.
    const cpu = process.cpuUsage(w.cpu);
    const gcDelta = {};
    for (const [k, v] of Object.entries(gc)) gcDelta[k] = { count: v.count - (w.gc[k]?.count ?? 0), ms: v.ms - (w.gc[k]?.ms ?? 0) };
    const figures = {
      seconds: (Date.now() - w.at) / 1000,
      requests: requests - w.requests,
      cpuMs: (cpu.user + cpu.system) / 1000,
      gc: gcDelta,
      eventLoopUtilization: performance.eventLoopUtilization(w.elu).utilization,
      activeResources: counts(process.getActiveResourcesInfo()),
      memory: process.memoryUsage(),
      heap: getHeapStatistics(),
      spaces: Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { used: s.space_used_size, size: s.space_size }])),
    };
    const stop = (done) => (profile ? session.post("Profiler.stop", done) : done(new Error("not profiled")));
    stop((err, result) => {
      n++;
      if (!err) writeFileSync(join(dir, `${n}.cpuprofile`), JSON.stringify(result.profile));
      writeFileSync(join(dir, `${n}.json`), JSON.stringify(figures, null, 2));
      if ((process.env.PROBE_HEAP_SNAPSHOTS ?? "").split(",").includes(String(n))) writeHeapSnapshot(join(dir, `${n}.heapsnapshot`));
    });
  });
}
