/**
 * KiCad processes run in a process group of their own (a new session on POSIX), so that a
 * launcher (Flatpak, AppImage, a wrapper script) and the program it starts are killed
 * together: see `process.ts`.
 *
 * A group of its own no longer gets the terminal's Ctrl-C, which used to reach kicad-cli along
 * with copperhead. So while any group is alive, SIGINT and SIGTERM are passed on to it, as the
 * terminal did, without changing what they do to copperhead (`util/signals.ts`); and on exit,
 * every group still alive is killed, so none outlives the process that started it.
 */
import { addSignalForwarder, signalGroup, signalHandledElsewhere } from "../../util/signals.ts";

const SIGNALS = ["SIGINT", "SIGTERM"] as const;
const live = new Set<Bun.Subprocess>();

/** Watches `proc`'s group until it exits (see above). */
export function trackGroup(proc: Bun.Subprocess): void {
  if (live.size === 0) {
    for (const signal of SIGNALS) addSignalForwarder(signal, forward);
    process.on("exit", killAll);
  }
  live.add(proc);
  void proc.exited.then(() => {
    live.delete(proc);
    if (live.size === 0) unwatch();
  });
}

function forward(signal: NodeJS.Signals): void {
  for (const proc of live) signalGroup(proc, signal);
  // Nobody else decides: the signal does what it would have done without this listener.
  if (signalHandledElsewhere(signal, forward)) return;
  unwatch();
  process.kill(process.pid, signal);
}

function killAll(): void {
  for (const proc of live) signalGroup(proc);
}

function unwatch(): void {
  for (const signal of SIGNALS) process.off(signal, forward);
  process.off("exit", killAll);
}
