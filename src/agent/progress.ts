/**
 * Typed progress of a run. The CLI renders these as a live status line on stderr; the MCP
 * server forwards them as progress notifications. Never part of the result itself.
 */
export type RunPhase = "preflight" | "baseline" | "propose" | "approve" | "edit" | "verify" | "commit" | "rollback";

export type ProgressEvent =
  | { type: "phase"; phase: RunPhase; message: string }
  | { type: "turn"; turn: number; maxTurns: number }
  | { type: "tool"; name: string; ok: boolean; message: string }
  | { type: "verify"; ok: boolean; newFindings: number }
  | { type: "repair"; cycle: number; maxRepairCycles: number }
  | { type: "commit"; commit: string }
  /** `files`: how many files the run had touched and restored; none means it ended before any edit. */
  | { type: "rollback"; reason: string; files: number };

export type ProgressListener = (event: ProgressEvent) => void;

/** One line a person reads, for status lines and notification messages. */
export function describeProgress(event: ProgressEvent): string {
  switch (event.type) {
    case "phase":
      return `${event.phase}: ${event.message}`;
    case "turn":
      return `model turn ${event.turn}/${event.maxTurns}`;
    case "tool":
      return `${event.ok ? "tool" : "tool error"} ${event.name}: ${event.message}`;
    case "verify":
      return event.ok
        ? "verification passed"
        : `verification found ${event.newFindings} new finding${event.newFindings === 1 ? "" : "s"}`;
    case "repair":
      return `repair cycle ${event.cycle}/${event.maxRepairCycles}`;
    case "commit":
      return `committed ${event.commit.slice(0, 12)}`;
    case "rollback":
      return event.files > 0
        ? `rolled back: ${event.reason}`
        : `ended before any edit (${event.reason}): nothing was started, nothing to roll back`;
  }
}
