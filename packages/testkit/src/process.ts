import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

/**
 * The node flags services run with in production (the Dockerfile's CMD, scripts/stack.mjs):
 * V8's memory reducer wakes an idle process every 8 s to see whether a GC would shrink the
 * heap (docs/decisions/0200); a service's heap then keeps its size until the next GC.
 */
export const SERVICE_NODE_FLAGS = ["--no-memory-reducer"];

export type LogLine = Record<string, unknown> & { msg?: string; level?: string; request_id?: string };

/** One service process with its output captured as parsed JSON lines. */
export class ServiceProcess {
  readonly lines: LogLine[] = [];
  /** Every exit of the process so far (planned or not), oldest first. */
  readonly exits: { code: number | null; signal: NodeJS.Signals | null; at: Date }[] = [];
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> = Promise.resolve(null);
  private file: WriteStream | undefined;

  constructor(
    readonly name: string,
    private readonly entry: string,
    readonly env: Record<string, string>,
    logDir?: string,
  ) {
    if (logDir) {
      mkdirSync(logDir, { recursive: true });
      this.file = createWriteStream(join(logDir, `${name}.log`), { flags: "a" });
    }
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    // SERVICE_NODE_ARGS: extra node/V8 flags for every service (profiling and benchmark experiments),
    // after the production ones (a later V8 flag wins: `--memory-reducer` measures without ours).
    const nodeArgs = [...SERVICE_NODE_FLAGS, ...(process.env.SERVICE_NODE_ARGS ?? "").split(" ").filter(Boolean)];
    const child = spawn(process.execPath, [...nodeArgs, this.entry], { env: this.env, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    child.on("error", (err) => this.lines.push({ raw: `spawn failed: ${err.message}` }));
    const take = (stream: NodeJS.ReadableStream) => {
      createInterface({ input: stream }).on("line", (line) => {
        this.file?.write(`${line}\n`);
        try {
          this.lines.push(JSON.parse(line) as LogLine);
        } catch {
          this.lines.push({ raw: line });
        }
      });
    };
    take(child.stdout!);
    take(child.stderr!);
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        this.exits.push({ code, signal, at: new Date() });
        resolve(code);
      }),
    );
  }

  signal(sig: NodeJS.Signals): void {
    this.child?.kill(sig);
  }

  /** Sends SIGTERM (or the given signal) and waits for the exit code. */
  async stop(sig: NodeJS.Signals = "SIGTERM", timeoutMs = 15_000): Promise<number | null> {
    if (!this.running) return this.child?.exitCode ?? null;
    this.child!.kill(sig);
    const timer = setTimeout(() => this.child?.kill("SIGKILL"), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  waitExit(): Promise<number | null> {
    return this.exited;
  }

  tail(n = 20): string {
    return this.lines
      .slice(-n)
      .map((l) => (typeof l.raw === "string" ? l.raw : JSON.stringify(l)))
      .join("\n");
  }

  close(): void {
    this.file?.end();
  }
}
