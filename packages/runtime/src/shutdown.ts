import type { Logger } from "@gateway/logger";

export type ShutdownStep = { name: string; run: () => Promise<void> };

/**
 * Runs the steps in order on SIGTERM/SIGINT (or a fatal error), each bounded
 * by what is left of the grace period, then exits. A second signal exits at once.
 * The steps run once: a fatal error during shutdown (several streams failing
 * the same way) joins the shutdown under way, with exit code 1, instead of
 * starting the steps again (which closed every server once more per error and
 * piled up their `close` listeners: issue 10's MaxListenersExceededWarning).
 */
export class Shutdown {
  private readonly steps: ShutdownStep[] = [];
  private started = false;
  private running: Promise<never> | undefined;
  private exitCode = 0;

  constructor(
    private readonly logger: Logger,
    private readonly graceMs: number,
    private readonly exit: (code: number) => never = (code) => process.exit(code),
  ) {}

  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  /** For what was started last and must stop first (servers taking requests). */
  addFirst(name: string, run: () => Promise<void>): void {
    this.steps.unshift({ name, run });
  }

  install(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.started) {
        this.logger.warn({ signal }, "second signal: exiting now");
        this.exit(1);
      }
      void this.run(`signal ${signal}`, 0);
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
    process.on("uncaughtException", (err) => {
      this.logger.fatal({ err }, "uncaught exception");
      void this.run("uncaught exception", 1);
    });
    process.on("unhandledRejection", (err) => {
      this.logger.fatal({ err }, "unhandled rejection");
      void this.run("unhandled rejection", 1);
    });
  }

  run(reason: string, exitCode: number): Promise<never> {
    this.exitCode = Math.max(this.exitCode, exitCode);
    if (this.running) {
      this.logger.warn({ reason }, "already shutting down");
      return this.running;
    }
    this.started = true;
    this.running = this.runSteps(reason);
    return this.running;
  }

  private async runSteps(reason: string): Promise<never> {
    const deadline = Date.now() + this.graceMs;
    this.logger.info({ reason }, "shutting down");
    const hardStop = setTimeout(() => {
      this.logger.error("shutdown overran its grace period; exiting");
      this.exit(1);
    }, this.graceMs + 5_000);
    hardStop.unref();
    for (const step of this.steps) {
      const left = Math.max(0, deadline - Date.now());
      try {
        await Promise.race([step.run(), new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), left + 1_000).unref())]);
      } catch (err) {
        this.exitCode = 1;
        this.logger.warn({ err, step: step.name }, "shutdown step failed");
      }
    }
    clearTimeout(hardStop);
    this.logger.info({ code: this.exitCode }, "stopped");
    return this.exit(this.exitCode);
  }
}
