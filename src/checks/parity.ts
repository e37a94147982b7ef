/**
 * The `parity` family: does the board match the schematic?
 *
 * kicad-cli's `--schematic-parity` is one witness, but it reports an empty list when it could
 * not load the schematic, and it rates mismatches as mere warnings. So parity is also computed
 * natively — components against footprints, netlist against pad nets — and both witnesses are
 * merged on (type, reference). Every parity problem is an error: a board out of step with its
 * schematic is not fit to build.
 */
import type { Footprint } from "../kicad/board.ts";
import type { Violation } from "../kicad/kicad-cli.ts";
import { repoPath, type Design } from "../design/design.ts";
import { drcFindings } from "./drc.ts";
import type { ItemIdentity } from "./kicad-items.ts";
import { familyResult } from "./result.ts";
import type { CheckResult, Finding } from "./types.ts";

export interface KicadParity {
  violations: Violation[];
  /** False when kicad-cli could not compare (no schematic found); the native check stands alone. */
  checked: boolean;
}

export function checkParity(design: Design, kicad: KicadParity | undefined, items: Map<string, ItemIdentity>): CheckResult {
  const native = nativeParity(design);
  const byKey = new Map(native.map((f) => [f.key, f]));
  const knownRefs = new Set([...design.components.map((c) => c.ref), ...(design.board?.footprints().map((f) => f.ref) ?? [])]);
  for (const finding of kicad ? drcFindings("parity", kicad.violations, design, items) : []) {
    const ref = finding.location?.ref ?? refInText(finding.message, knownRefs);
    const pin = finding.location?.pin;
    const key = ref ? `parity:${finding.rule}:${ref}${pin ? `.${pin}` : ""}` : finding.key;
    if (!byKey.has(key)) byKey.set(key, { ...finding, key, severity: "error", location: { ...finding.location!, ...(ref ? { ref } : {}) } });
  }
  const result = familyResult("parity", [...byKey.values()], { cleanSummary: "board matches schematic" });
  if (kicad && !kicad.checked) result.summary += " (kicad-cli could not compare; native check only)";
  return result;
}

/** The first word of `text` that is a known reference designator (references are never translated). */
function refInText(text: string, refs: Set<string>): string | undefined {
  return text.split(/[^A-Za-z0-9_#+-]+/).find((word) => refs.has(word));
}

/** Components against footprints, and the native netlist against every pad's net. */
export function nativeParity(design: Design): Finding[] {
  const board = design.board;
  if (!board) return [];
  const file = repoPath(design, design.project.board!);
  const findings: Finding[] = [];
  const add = (rule: string, ref: string, message: string, extra: { pin?: string; net?: string } = {}) =>
    findings.push({
      check: "parity",
      rule,
      severity: "error",
      message,
      key: `parity:${rule}:${extra.pin ? `${ref}.${extra.pin}` : ref}`,
      location: { file, ref, ...extra },
    });

  const footprints = board.footprints();
  const byPath = new Map<string, Footprint>();
  const byRef = new Map<string, Footprint[]>();
  for (const fp of footprints) {
    if (fp.path) byPath.set(fp.path, fp);
    byRef.set(fp.ref, [...(byRef.get(fp.ref) ?? []), fp]);
  }
  for (const [ref, list] of byRef) {
    if (list.length > 1 && ref) add("duplicate_footprints", ref, `${list.length} footprints on the board are labelled ${ref}`);
  }

  const matched = new Set<Footprint>();
  const expectedNets = new Map<string, string>();
  for (const net of design.netlist.nets) for (const node of net.nodes) expectedNets.set(`${node.ref}\u0000${node.pin}`, net.name);

  for (const c of design.components) {
    if (!c.onBoard) continue;
    const fp = byPath.get(c.symbolPath) ?? byRef.get(c.ref)?.[0];
    if (!fp) {
      add("missing_footprint", c.ref, `${c.ref} (${c.value}) is in the schematic but has no footprint on the board`);
      continue;
    }
    matched.add(fp);
    if (fp.value !== c.value) add("footprint_symbol_mismatch", c.ref, `${c.ref}: board value ${quote(fp.value)} differs from schematic value ${quote(c.value)}`);
    else if (c.footprint && fp.libId !== c.footprint) {
      add("footprint_symbol_mismatch", c.ref, `${c.ref}: board footprint ${quote(fp.libId)} differs from schematic footprint ${quote(c.footprint)}`);
    } else if (fp.ref !== c.ref) add("footprint_symbol_mismatch", c.ref, `${c.ref}: board reference is ${quote(fp.ref)}`);
    for (const pad of fp.pads) {
      const expected = expectedNets.get(`${c.ref}\u0000${pad.number}`);
      if (expected === undefined) continue;
      const actual = pad.net?.name ?? "";
      if (actual !== expected) {
        add("net_conflict", c.ref, `${c.ref} pad ${pad.number} is on ${quote(actual || "no net")} but the schematic puts it on ${quote(expected)}`, { pin: pad.number, net: expected });
      }
    }
  }
  for (const fp of footprints) {
    if (matched.has(fp) || fp.attributes.includes("board_only")) continue;
    add("extra_footprint", fp.ref, `${fp.ref} (${fp.value}) is on the board but not in the schematic`);
  }
  return findings;
}

function quote(s: string): string {
  return JSON.stringify(s);
}
