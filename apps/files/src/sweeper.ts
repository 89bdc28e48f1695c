import type { Logger } from "@gateway/logger";
import type { FilesContext } from "./domain/context.js";
import { sweepFiles, type SweepFilesInput } from "./domain/files/sweep.js";

/**
 * Runs the sweep every `intervalMs` (one at a time per process; replicas may
 * overlap, the sweep itself is safe for that). `stop` waits for a running sweep.
 */
export function startSweeper(ctx: FilesContext, options: SweepFilesInput & { intervalMs: number; logger: Logger }): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  let stopped = false;
  const tick = () => {
    if (running || stopped) return;
    running = sweepFiles({ ctx, input: options })
      .then((r) => {
        if (r.expired + r.exhausted + r.abandoned > 0) options.logger.info(r, "files swept");
      })
      .catch((err: unknown) => options.logger.warn({ err }, "sweep failed; it runs again at the next interval"))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
