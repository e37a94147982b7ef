/**
 * The check report: findings grouped by check family.
 *
 * The report is a pure function of the repo state — no timestamps, durations or absolute
 * paths — so the same state always serialises to the same bytes, and a finding's `key` stays
 * stable when coordinates move, which lets `do` tell new findings from baseline ones.
 */

export type Severity = "error" | "warning" | "info";

/** Families in the order they run and are reported. */
export const CHECK_IDS = ["erc", "drc", "parity", "routing", "drift", "requirements", "changes", "fab"] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export interface FindingLocation {
  /** Repo-relative path, `/`-separated. */
  file: string;
  line?: number;
  column?: number;
  ref?: string;
  pin?: string;
  net?: string;
  /** Human sheet path, e.g. `/` or `/Regulator/`. */
  sheet?: string;
  /** Board layer, e.g. `F.Cu`, for a board finding on one layer. */
  layer?: string;
  /** Position in mm on the sheet or the board: for kicad-cli findings, the first item's. */
  x?: number;
  y?: number;
}

/** Where a finding stands against a baseline (`check --baseline`, the hook, `do`'s gate). */
export type BaselineState = "new" | "unchanged" | "absent";

export interface Finding {
  check: CheckId;
  /** Rule within the family, e.g. kicad-cli's violation type or a requirement id. */
  rule: string;
  severity: Severity;
  message: string;
  /**
   * Identity within a report, e.g. `erc:pin_not_connected:U1.5`; survives coordinate changes.
   * Violations that name the same objects are told apart by an occurrence suffix (`…#2`), which
   * keeps keys unique but is no identity across reports (see `checks/baseline.ts`).
   */
  key: string;
  location?: FindingLocation;
  /**
   * The uuids kicad-cli gives for the objects a finding is about, when every one of them is an
   * object of the design's files (KiCad makes up a uuid for one it cannot name, anew on every
   * load) and they are what the finding is about (a net-wide finding is about its net, whichever
   * pin KiCad reports it on). `checks/baseline.ts` matches findings to the baseline by them,
   * and tells a violation KiCad reports again, with another partner, from a new one.
   */
  items?: string[];
  /** The parts the finding's objects belong to (`C4`, `U1`), for a kicad-cli finding that names any. */
  refs?: string[];
  /** Set only in a report checked against a baseline. */
  baselineState?: BaselineState;
}

export type CheckStatus = "pass" | "fail" | "warn" | "skipped";

export interface CheckResult {
  id: CheckId;
  status: CheckStatus;
  /** One line a person reads first, e.g. "2 errors, 1 warning" or why it was skipped. */
  summary: string;
  findings: Finding[];
}

export interface CheckReport {
  schema: "copperhead.check/1";
  ok: boolean;
  /** Repo-relative path of the `.kicad_pro`. */
  project: string;
  kicad: { version: string } | null;
  strict: boolean;
  fab: boolean;
  checks: CheckResult[];
  counts: Record<Severity, number>;
  /** Present when the report was checked against a baseline; `ok` then means "nothing new fails". */
  baseline?: BaselineReport;
}

export interface BaselineReport {
  /** The ref as given (`HEAD`, `main`, `HEAD~1`, a hash). */
  ref: string;
  /** The commit it named. */
  commit: string;
  counts: Record<BaselineState, number>;
  /** Findings of the baseline that the checked state no longer has. */
  absent: Finding[];
}

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Deterministic finding order: severity, then key, then message. */
export function compareFindings(a: Finding, b: Finding): number {
  return SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || cmp(a.key, b.key) || cmp(a.message, b.message);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
