/**
 * Polls `check` until it holds, and answers how long that took (ms); fails naming
 * `what` after `timeoutMs` (generous: a loaded machine is slow, never wrong).
 */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - started;
}
