/**
 * kicad-cli ERC/DRC violations as copperhead findings. One conversion for every family fed by
 * kicad-cli (erc, drc, parity, routing), so keys, messages and locations look the same.
 *
 * Findings are kicad-cli's one for one: every violation it reports with the project's own
 * severities is a finding, and only the ones the project excludes are dropped. Keys name the
 * objects involved (never coordinates), plus what tells two violations between the same
 * objects apart: the copper layer kicad-cli names in the description (a thermal relief starved
 * on F.Cu and on B.Cu), and, when even that is equal (two teardrops of one net touching the same
 * zone), an occurrence index assigned in item-uuid order (see `distinctKeys`).
 */
import type { ReportItem, Violation } from "../kicad/cli/kicad-cli.ts";
import { repoPath, type Design } from "../design/design.ts";
import type { ItemIdentity } from "./kicad-items.ts";
import type { Candidate } from "./result.ts";
import type { CheckId, Finding, FindingLocation, Severity } from "./types.ts";

export interface ViolationContext {
  design: Design;
  /** Resolves an item uuid to what it names in the design. */
  identify: (uuid: string) => ItemIdentity | undefined;
  /** File the violation belongs to when no item resolves (absolute). */
  file: string;
  /** Human sheet path for schematic violations. */
  sheet?: string;
  /**
   * What turns an item's `pos` into millimetres. kicad-cli's ERC JSON writer scales schematic
   * positions as if they were board units, 100× too small (KiCad 9 and 10 alike), so ERC passes
   * 100; DRC positions are right as written.
   */
  positionScale?: number;
}

/**
 * Converts one violation; excluded violations (the project waived them) give undefined. The
 * candidate's `order` (sheet, then item uuids, which survive moves) ranks it among violations
 * that end up with the same key.
 */
export function violationFinding(check: CheckId, violation: Violation, ctx: ViolationContext): Candidate | undefined {
  if (violation.excluded) return undefined;
  const resolved = violation.items.map((item) => ({ item, identity: ctx.identify(item.uuid) }));
  const subject = subjectOf(violation, resolved[0]?.identity);
  const ids = subject ? [subject] : resolved.map(({ item, identity }) => stableId(item, identity, ctx.sheet)).sort();
  const first = resolved.find((r) => r.identity)?.identity;
  const location: FindingLocation = { file: repoPath(ctx.design, first?.file ?? ctx.file) };
  if (ctx.sheet) location.sheet = ctx.sheet;
  if (first?.ref) location.ref = first.ref;
  if (first?.pin) location.pin = first.pin;
  const net = resolved.find((r) => r.identity?.net)?.identity?.net;
  if (net) location.net = net;
  const layer = layerOf(violation.description);
  Object.assign(location, placeOf(violation, ctx, layer));
  const described = violation.items.map((i) => i.description).filter(Boolean);
  const finding: Finding = {
    check,
    rule: violation.type,
    severity: severityOf(violation.severity),
    message: described.length ? `${violation.description}: ${described.join("; ")}` : violation.description,
    key: [check, violation.type, ...(ids.length ? [ids.join("+")] : []), ...(layer ? [layer] : [])].join(":"),
    location,
  };
  const refs = [...new Set(resolved.flatMap((r) => (r.identity?.ref ? [r.identity.ref] : [])))].sort((a, b) =>
    a.localeCompare(b, "en", { numeric: true }),
  );
  if (refs.length > 0) finding.refs = refs;
  const uuids = violation.items.map((i) => i.uuid).sort();
  if (uuids.length > 0 && resolved.every((r) => r.identity) && !subject) finding.items = uuids;
  return { finding, order: `${ctx.sheet ?? ""}\u0000${uuids.join("+")}` };
}

/**
 * Where a violation is: the position of its first item (kicad-cli writes no position for the
 * violation itself, and its first item is the one the violation is reported on), rounded to
 * the micrometre, and for a board violation the layer it is on when kicad-cli says (in the
 * violation's text, or as its first item's, "Track [GND] on F.Cu").
 */
function placeOf(
  violation: Violation,
  ctx: ViolationContext,
  layer: string | undefined,
): Pick<FindingLocation, "layer" | "x" | "y"> {
  const first = violation.items.find((i) => i.pos);
  const scale = ctx.positionScale ?? 1;
  const place: Pick<FindingLocation, "layer" | "x" | "y"> = {};
  const onBoard = ctx.sheet === undefined;
  const onLayer =
    layer ?? (onBoard && first ? / on ([A-Za-z0-9_]+\.[A-Za-z_]+)/.exec(first.description)?.[1] : undefined);
  if (onLayer) place.layer = onLayer;
  if (first?.pos) {
    place.x = Math.round(first.pos.x * scale * 1000) / 1000;
    place.y = Math.round(first.pos.y * scale * 1000) / 1000;
  }
  return place;
}

/**
 * Violations of a whole net that kicad-cli reports on one pin of it, whichever its connection
 * graph meets first (ERC_TESTER::TestPinToPin): adding a power symbol to an undriven net can move
 * the report to the new symbol's pin. Keyed by the net, the finding stays the one it was: its
 * items are not what it is about, so it carries none for matching.
 */
const NET_WIDE = new Set(["pin_not_driven", "power_pin_not_driven"]);

/**
 * What a violation is about when that is not its items: a net-wide one's net, and for
 * `multiple_net_names` the two names one net has ("Both +3V3 and IOVDD are attached to the same
 * items"), which kicad-cli reports on whichever pair of their drivers its graph meets first. A
 * run that adds a +3V3 power symbol to that net can move the report to the new symbol; keyed by
 * the names, it is the conflict it was.
 */
function subjectOf(violation: Violation, identity: ItemIdentity | undefined): string | undefined {
  if (NET_WIDE.has(violation.type) && violation.items.length === 1 && identity?.net) return `net:${identity.net}`;
  if (violation.type !== "multiple_net_names") return undefined;
  const names = /^Both (.+) and (.+) are attached to the same items/.exec(violation.description);
  return names ? `names:${[names[1]!, names[2]!].sort().join("+")}` : undefined;
}

/**
 * The layer a violation is on, when kicad-cli says so in its description. Descriptions are in
 * English because every kicad-cli run pins the language (see `kicad/cli/process.ts`); KiCad 9
 * writes `(layer F.Cu; …)` for thermal reliefs and appends ` (B.Cu)` for connection widths.
 */
export function layerOf(description: string): string | undefined {
  return /\(layer ([^;)]+)[;)]/.exec(description)?.[1] ?? /\) \(([^()]+)\)$/.exec(description)?.[1];
}

/**
 * References and pins are unique across the design; anything else (labels, wires, sheets) is
 * qualified by its sheet path so the same label text on two sheets stays two findings. An item
 * copperhead cannot name is described by kicad-cli's text with its measurements left out, so a
 * wire that grows or moves keeps its key.
 */
function stableId(item: ReportItem, identity: ItemIdentity | undefined, sheet: string | undefined): string {
  if (identity?.ref && identity.id) return identity.id;
  const id = identity?.id || withoutMeasures(item.description);
  const where = identity?.sheet ?? sheet;
  return where && where !== "/" ? `${where}${id}` : id;
}

/** `Vertical Wire, length 2.54 mm` → `Vertical Wire`; `Track [GND] on F.Cu, length 1.2 mm` → `Track [GND] on F.Cu`. */
function withoutMeasures(description: string): string {
  return description
    .replace(/,\s*(?:length|width|priority)\s+[^,]*/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function severityOf(severity: string): Severity {
  return severity === "error" ? "error" : severity === "warning" ? "warning" : "info";
}
