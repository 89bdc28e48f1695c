import { createHistogram, performance } from "node:perf_hooks";
import { Gauge, type Registry } from "prom-client";

export type EventLoopSamplerOptions = {
  /** The interval while the loop works (prom-client's `eventLoopMonitoringPrecision`). */
  busyMs: number;
  /** The longest interval, reached by doubling while the loop stays idle. */
  idleMaxMs: number;
  /**
   * The loop counts as working when its thread used at least this share of the time since
   * the last sample on the CPU (`process.threadCpuUsage`: CPU time, which a loaded machine
   * does not inflate as it does the loop's busy wall time).
   */
  busyUtilization: number;
};

export const EVENT_LOOP_SAMPLER_DEFAULTS: EventLoopSamplerOptions = { busyMs: 1_000, idleMaxMs: 60_000, busyUtilization: 0.01 };

/** The gauges prom-client's default metrics fill from `monitorEventLoopDelay`, with the same names and meaning. */
const GAUGES = [
  ["nodejs_eventloop_lag_min_seconds", "The minimum recorded event loop delay.", (h: Histogram) => h.min],
  ["nodejs_eventloop_lag_max_seconds", "The maximum recorded event loop delay.", (h: Histogram) => h.max],
  ["nodejs_eventloop_lag_mean_seconds", "The mean of the recorded event loop delays.", (h: Histogram) => h.mean],
  ["nodejs_eventloop_lag_stddev_seconds", "The standard deviation of the recorded event loop delays.", (h: Histogram) => h.stddev],
  ["nodejs_eventloop_lag_p50_seconds", "The 50th percentile of the recorded event loop delays.", (h: Histogram) => h.percentile(50)],
  ["nodejs_eventloop_lag_p90_seconds", "The 90th percentile of the recorded event loop delays.", (h: Histogram) => h.percentile(90)],
  ["nodejs_eventloop_lag_p99_seconds", "The 99th percentile of the recorded event loop delays.", (h: Histogram) => h.percentile(99)],
] as const;

type Histogram = ReturnType<typeof createHistogram>;

export const EVENT_LOOP_GAUGES = GAUGES.map(([name]) => name);
const LAST_GAUGE = GAUGES[GAUGES.length - 1]![0];

/**
 * The event-loop delay histogram, sampled by a timer that sleeps with the process: how late
 * the timer fires (`monitorEventLoopDelay` records the whole time between two firings,
 * its interval included, so its p50 read about the interval itself), and the timer's
 * interval doubles, from `busyMs` up to `idleMaxMs`, while the loop's thread spent less than
 * `busyUtilization` of the time since the last sample on the CPU, and is back at `busyMs` as
 * soon as it spent more. A working process is sampled as before; an idle one wakes once a
 * minute for it instead of once a second. A stall always delays the next sample, so any
 * stall longer than the current interval is recorded; so is one that makes the loop busy
 * from then on. Between two scrapes without a sample the gauges read 0 (no delay seen).
 * `stop` ends the timer; `interval` is the current one (tests).
 */
export function sampleEventLoopDelay(registry: Registry, options: EventLoopSamplerOptions = EVENT_LOOP_SAMPLER_DEFAULTS): { stop(): void; interval(): number } {
  const histogram = createHistogram();
  for (const [name, help, read] of GAUGES)
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        // collect runs per gauge in one scrape; the last one clears the histogram for the next.
        this.set(histogram.count > 0 ? read(histogram) / 1e9 : 0);
        if (name === LAST_GAUGE) histogram.reset();
      },
    });
  let interval = options.busyMs;
  let due = performance.now() + interval;
  let mark = process.threadCpuUsage();
  let markedAt = performance.now();
  let timer: NodeJS.Timeout;
  const tick = () => {
    const now = performance.now();
    histogram.record(Math.max(1, Math.round((now - due) * 1e6))); // ns, at least 1 (the histogram's floor)
    const cpu = process.threadCpuUsage(mark);
    const busy = (cpu.user + cpu.system) / 1_000 >= options.busyUtilization * (now - markedAt);
    mark = process.threadCpuUsage();
    markedAt = now;
    interval = busy ? options.busyMs : Math.min(options.idleMaxMs, interval * 2);
    schedule();
  };
  const schedule = () => {
    due = performance.now() + interval;
    timer = setTimeout(tick, interval);
    timer.unref();
  };
  schedule();
  return { stop: () => clearTimeout(timer), interval: () => interval };
}
