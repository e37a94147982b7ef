/**
 * Typed errors shared by every layer.
 *
 * Commands throw `CopperheadError` for anything a user (or an MCP host) must act on. The CLI
 * renders `message` plus `fix` and exits with `exitCode`; the MCP server serialises
 * `toJSON()` as `{ error: { code, message, ... } }`. Keeping one class means the exit-code
 * table lives in exactly one place.
 */

/** Exit codes, identical for every command (ARCHITECTURE.md, "Invariants"). */
export const ExitCode = {
  ok: 0,
  /** The gate said no: a check failed, `do` rolled back, a resolve failed. */
  gate: 1,
  /** A human is needed: `do` refused, `sync` found requirement violations. */
  human: 2,
  /** Could not run: usage, config or environment. */
  cannotRun: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type ErrorCode =
  | "usage"
  | "not_found"
  | "bad_path"
  | "config_invalid"
  | "project_not_found"
  | "project_ambiguous"
  | "parse_error"
  | "legacy_format"
  | "sheet_recursion"
  | "input_too_large"
  | "unreadable"
  | "write_failed"
  | "kicad_cli_missing"
  | "kicad_cli_too_old"
  | "kicad_python_missing"
  | "kicad_load_failed"
  | "kicad_timeout"
  | "kicad_output_too_large"
  | "kicad_failed"
  | "library_not_found"
  | "library_unreadable"
  | "footprint_not_found"
  | "symbol_not_found"
  | "board_outline_missing"
  | "git_failed"
  | "not_a_git_repo"
  | "busy"
  | "missing_api_key"
  | "sampling_unsupported"
  | "cli_not_found"
  | "cli_not_logged_in"
  | "provider_error"
  | "dirty_tree"
  | "edit_conflict"
  | "journal_refused"
  | "lock_refused"
  | "internal_error";

/**
 * Errors no model can work around, which end a gated run when a tool call hits them (rolled
 * back), and which the command then fails with for the user to fix: a machine that cannot
 * finish the edit (no KiCad Python to refill zones), which a staged or unrouted part must not
 * hide. Every other error is the model's to read as a tool error, and the run goes on — a fault
 * of copperhead's own (`internal_error`) included, when the tool's effect lets the run recover
 * from it (agent/loop.ts).
 */
const ENDS_RUN: ReadonlySet<ErrorCode> = new Set(["kicad_python_missing"]);

export interface ErrorDetails {
  /** One sentence telling the user how to fix it. */
  fix?: string;
  /** Extra machine-readable context; never secrets. */
  [key: string]: unknown;
}

export class CopperheadError extends Error {
  override readonly name = "CopperheadError";
  readonly code: ErrorCode;
  readonly details: ErrorDetails;
  readonly exitCode: ExitCode;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, exitCode: ExitCode = ExitCode.cannotRun) {
    super(message);
    this.code = code;
    this.details = details;
    this.exitCode = exitCode;
  }

  get fix(): string | undefined {
    return this.details.fix;
  }

  /** Whether a gated run ends when a tool call hits this error (see `ENDS_RUN`). */
  get endsRun(): boolean {
    return ENDS_RUN.has(this.code);
  }

  toJSON(): { error: { code: ErrorCode; message: string } & ErrorDetails } {
    return { error: { code: this.code, message: this.message, ...this.details } };
  }
}

/** Wraps anything thrown into a CopperheadError so renderers only handle one shape. */
export function asCopperheadError(err: unknown): CopperheadError {
  if (err instanceof CopperheadError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new CopperheadError("internal_error", message, {
    fix: "This is a bug in copperhead; please report it with the command you ran.",
  });
}
