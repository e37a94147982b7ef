/**
 * kicad-cli ERC/DRC violations as copperhead findings. One conversion for every family fed by
 * kicad-cli (erc, drc, parity, routing), so keys, messages and locations look the same.
 */
import type { ReportItem, Violation } from "../kicad/kicad-cli.ts";
import { repoPath, type Design } from "../design/design.ts";
import type { ItemIdentity } from "./kicad-items.ts";
import type { CheckId, Finding, FindingLocation, Severity } from "./types.ts";

export interface ViolationContext {
  design: Design;
  /** Resolves an item uuid to what it names in the design. */
  identify: (uuid: string) => ItemIdentity | undefined;
  /** File the violation belongs to when no item resolves (absolute). */
  file: string;
  /** Human sheet path for schematic violations. */
  sheet?: string;
}

/** Converts one violation; excluded violations (the project waived them) give undefined. */
export function violationFinding(check: CheckId, violation: Violation, ctx: ViolationContext): Finding | undefined {
  if (violation.excluded) return undefined;
  const resolved = violation.items.map((item) => ({ item, identity: ctx.identify(item.uuid) }));
  const ids = resolved.map(({ item, identity }) => stableId(item, identity, ctx.sheet)).sort();
  const first = resolved.find((r) => r.identity)?.identity;
  const location: FindingLocation = { file: repoPath(ctx.design, first?.file ?? ctx.file) };
  if (ctx.sheet) location.sheet = ctx.sheet;
  if (first?.ref) location.ref = first.ref;
  if (first?.pin) location.pin = first.pin;
  const net = resolved.find((r) => r.identity?.net)?.identity?.net;
  if (net) location.net = net;
  const described = violation.items.map((i) => i.description).filter(Boolean);
  return {
    check,
    rule: violation.type,
    severity: severityOf(violation.severity),
    message: described.length ? `${violation.description}: ${described.join("; ")}` : violation.description,
    key: [check, violation.type, ...(ids.length ? [ids.join("+")] : [])].join(":"),
    location,
  };
}

/**
 * References and pins are unique across the design; anything else (labels, wires, sheets) is
 * qualified by its sheet path so the same label text on two sheets stays two findings.
 */
function stableId(item: ReportItem, identity: ItemIdentity | undefined, sheet: string | undefined): string {
  if (identity?.ref) return identity.id;
  const id = identity?.id ?? item.description.replace(/\s+/g, " ").trim();
  return sheet && sheet !== "/" ? `${sheet}${id}` : id;
}

function severityOf(severity: string): Severity {
  return severity === "error" ? "error" : severity === "warning" ? "warning" : "info";
}
