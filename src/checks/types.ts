/**
 * The check report: findings grouped by check family.
 *
 * The report is a pure function of the repo state — no timestamps, durations or absolute
 * paths — so the same state always serialises to the same bytes, and a finding's `key` stays
 * stable when coordinates move, which lets `do` tell new findings from baseline ones.
 *
 * The parts that MCP results carry are valibot schemas (their types are inferred from them), so
 * the MCP server's output schemas describe exactly these shapes.
 */
import * as v from "valibot";

const SEVERITIES = ["error", "warning", "info"] as const;
export const SeveritySchema = v.picklist(SEVERITIES);
export type Severity = v.InferOutput<typeof SeveritySchema>;

/** A count for each severity. */
export const SeverityCountsSchema = v.object({ error: v.number(), warning: v.number(), info: v.number() });

/** Families in the order they run and are reported. */
export const CHECK_IDS = ["erc", "drc", "parity", "routing", "drift", "requirements", "changes", "fab"] as const;
export const CheckIdSchema = v.picklist(CHECK_IDS);
export type CheckId = v.InferOutput<typeof CheckIdSchema>;

export const FindingLocationSchema = v.object({
  /** Repo-relative path, `/`-separated. */
  file: v.string(),
  line: v.optional(v.number()),
  column: v.optional(v.number()),
  ref: v.optional(v.string()),
  pin: v.optional(v.string()),
  net: v.optional(v.string()),
  /** Human sheet path, e.g. `/` or `/Regulator/`. */
  sheet: v.optional(v.string()),
  /** Board layer, e.g. `F.Cu`, for a board finding on one layer. */
  layer: v.optional(v.string()),
  /** Position in mm on the sheet or the board: for kicad-cli findings, the first item's. */
  x: v.optional(v.number()),
  y: v.optional(v.number()),
});
export type FindingLocation = v.InferOutput<typeof FindingLocationSchema>;

/** Where a finding stands against a baseline (`check --baseline`, the hook, `do`'s gate). */
const BASELINE_STATES = ["new", "unchanged", "absent"] as const;
export type BaselineState = (typeof BASELINE_STATES)[number];

export const FindingSchema = v.object({
  check: CheckIdSchema,
  /** Rule within the family, e.g. kicad-cli's violation type or a requirement id. */
  rule: v.string(),
  severity: SeveritySchema,
  message: v.string(),
  /**
   * Identity within a report, e.g. `erc:pin_not_connected:U1.5`; survives coordinate changes.
   * Violations that name the same objects are told apart by an occurrence suffix (`…#2`), which
   * keeps keys unique but is no identity across reports (see `checks/baseline.ts`).
   */
  key: v.string(),
  location: v.optional(FindingLocationSchema),
  /**
   * The uuids kicad-cli gives for the objects a finding is about, when every one of them is an
   * object of the design's files (KiCad makes up a uuid for one it cannot name, anew on every
   * load) and they are what the finding is about (a net-wide finding is about its net, whichever
   * pin KiCad reports it on). `checks/baseline.ts` matches findings to the baseline by them,
   * and tells a violation KiCad reports again, with another partner, from a new one.
   */
  items: v.optional(v.array(v.string())),
  /** The parts the finding's objects belong to (`C4`, `U1`), for a kicad-cli finding that names any. */
  refs: v.optional(v.array(v.string())),
  /** Set only in a report checked against a baseline. */
  baselineState: v.optional(v.picklist(BASELINE_STATES)),
});
export type Finding = v.InferOutput<typeof FindingSchema>;

export const CheckStatusSchema = v.picklist(["pass", "fail", "warn", "skipped"]);
export type CheckStatus = v.InferOutput<typeof CheckStatusSchema>;

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

export const BaselineReportSchema = v.object({
  /** The ref as given (`HEAD`, `main`, `HEAD~1`, a hash). */
  ref: v.string(),
  /** The commit it named. */
  commit: v.string(),
  counts: v.object({ new: v.number(), unchanged: v.number(), absent: v.number() }),
  /** Findings of the baseline that the checked state no longer has. */
  absent: v.array(FindingSchema),
});
export type BaselineReport = v.InferOutput<typeof BaselineReportSchema>;

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** Deterministic finding order: severity, then key, then message. */
export function compareFindings(a: Finding, b: Finding): number {
  return SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || cmp(a.key, b.key) || cmp(a.message, b.message);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
