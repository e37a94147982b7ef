/**
 * Turning Ctrl-C and SIGTERM into an orderly stop, so a cancelled `do` rolls back instead of
 * dying mid-edit, from the CLI and from an MCP client alike.
 *
 * While `fn` runs:
 * - the first SIGINT or SIGTERM aborts the signal (reason: an `AbortError` DOMException naming
 *   the signal); the run sees it as soon as it is safe, rolls back and returns `rolled_back` /
 *   `cancelled` — or, when `git commit` had already started, lets the commit finish and says so;
 * - a second one does not interrupt that: it logs that the run is finishing safely and that
 *   one more forces an exit;
 * - a third exits at once with 128 + the signal number (130 for SIGINT). The lock is
 *   released on exit; the unfinished journal stays, and the next copperhead command on the
 *   repo restores the tree from it before doing anything else (after a `git commit` still
 *   running in its own process group has ended).
 * - `options.signal` (an MCP request's cancellation) aborts the same way.
 *
 * The handlers are removed when `fn` settles, so the process's own signal behaviour returns.
 */
import { log } from "../log.ts";

export interface CancellationOptions {
  /** An outer cancellation, e.g. the MCP request's; aborting it aborts `fn`'s signal. */
  signal?: AbortSignal;
}

const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 } as const;
type HandledSignal = keyof typeof SIGNAL_NUMBERS;

export async function withCancellation<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  options: CancellationOptions = {},
): Promise<T> {
  const controller = new AbortController();
  let received = 0;
  const onSignal = (name: HandledSignal): void => {
    received++;
    if (received === 1) {
      controller.abort(new DOMException(`Cancelled by ${name}`, "AbortError"));
    } else if (received === 2) {
      log.warn(
        `${name} again: finishing safely (rolling back, or letting a git commit that already started end); send it once more to exit now (the next copperhead command then restores the tree).`,
      );
    } else {
      process.exit(128 + SIGNAL_NUMBERS[name]);
    }
  };
  const handlers = (Object.keys(SIGNAL_NUMBERS) as HandledSignal[]).map(
    (name) => [name, () => onSignal(name)] as const,
  );
  const onOuterAbort = (): void => controller.abort(options.signal?.reason);
  for (const [name, handler] of handlers) process.on(name, handler);
  if (options.signal?.aborted) onOuterAbort();
  else options.signal?.addEventListener("abort", onOuterAbort, { once: true });
  try {
    return await fn(controller.signal);
  } finally {
    for (const [name, handler] of handlers) process.off(name, handler);
    options.signal?.removeEventListener("abort", onOuterAbort);
  }
}
