/**
 * Who decides what a Ctrl-C or SIGTERM does to the process. Several modules listen: the run's
 * cancellation turns it into an orderly stop, the repo lock releases its file and re-raises it,
 * and the KiCad runner passes it on to the process groups of KiCad processes (a group of its
 * own does not get the terminal's signal). A listener that only passes a signal on is a
 * *forwarder*: it must not keep the process alive, so the others discount it when they ask
 * whether someone else handles the signal, and it re-raises the signal itself when nobody does.
 */

type Listener = (signal: NodeJS.Signals) => void;

const forwarders = new WeakSet<Listener>();

/** Adds a listener that only passes `signal` on (see above). */
export function addSignalForwarder(signal: NodeJS.Signals, listener: Listener): void {
  forwarders.add(listener);
  process.on(signal, listener);
}

/** Whether a listener for `signal` other than `self` and the forwarders decides the process's fate. */
export function signalHandledElsewhere(signal: NodeJS.Signals, self: Listener): boolean {
  return process.listeners(signal).some((listener) => listener !== self && !forwarders.has(listener as Listener));
}

/** Windows has no process groups to signal; there the process itself is signalled. */
export const OWN_GROUP = process.platform !== "win32";

/**
 * Sends `signal` to the whole group of a process started with `detached: OWN_GROUP` (its own
 * session and group, so a launcher and what it started go together); nothing when it is gone.
 */
export function signalGroup(proc: Bun.Subprocess, signal: NodeJS.Signals = "SIGKILL"): void {
  try {
    if (OWN_GROUP) process.kill(-proc.pid, signal);
    else proc.kill(signal);
  } catch {
    // Already gone.
  }
}
