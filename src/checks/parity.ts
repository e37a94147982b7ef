/**
 * The `parity` family: does the board match the schematic?
 *
 * kicad-cli's `--schematic-parity` is the witness whenever it could compare: its findings are
 * the family, one for one, with the severities the project gives them (KiCad rates most parity
 * items as warnings; `--strict` fails on those). When it could not compare (it writes an empty
 * list when no schematic loads), the native comparison stands alone — components against
 * footprints, netlist against pad nets — rated by the same project rule severities.
 *
 * Keys are `parity:<rule>:<ref>[.<pad>][:<aspect>]` from either witness, so the two agree: the
 * aspect says which of a footprint's fields disagrees (`value`, `footprint`, an attribute).
 */
import { existsSync, readFileSync } from "node:fs";
import type { Footprint } from "../kicad/board.ts";
import type { Violation } from "../kicad/kicad-cli.ts";
import { repoPath, type Design } from "../design/design.ts";
import { drcFindings } from "./drc.ts";
import type { ItemIdentity } from "./kicad-items.ts";
import { familyResult } from "./result.ts";
import type { CheckResult, Finding, Severity } from "./types.ts";

export interface KicadParity {
  violations: Violation[];
  /** False when kicad-cli could not compare (no schematic found); the native check stands alone. */
  checked: boolean;
}

export function checkParity(design: Design, kicad: KicadParity | undefined, items: Map<string, ItemIdentity>, strict: boolean): CheckResult {
  const options = { strict, cleanSummary: "board matches schematic" };
  if (kicad?.checked) {
    const knownRefs = new Set([...design.components.map((c) => c.ref), ...(design.board?.footprints().map((f) => f.ref) ?? [])]);
    const findings = drcFindings("parity", kicad.violations, design, items).map(({ finding, order }) => {
      const ref = finding.location?.ref ?? refInText(finding.message, knownRefs);
      const pin = finding.location?.pin;
      const aspect = finding.rule === "footprint_symbol_mismatch" ? mismatchAspect(finding.message) : undefined;
      const key = ref ? ["parity", finding.rule, `${ref}${pin ? `.${pin}` : ""}`, ...(aspect ? [aspect] : [])].join(":") : finding.key;
      return { finding: { ...finding, key, location: { ...finding.location!, ...(ref ? { ref } : {}) } }, order };
    });
    return familyResult("parity", findings, options);
  }
  const result = familyResult("parity", nativeParity(design), options);
  if (kicad) result.summary += " (kicad-cli could not compare; native check only)";
  return result;
}

/**
 * Which field a `footprint_symbol_mismatch` is about, from kicad-cli's (English) wording:
 * "Value (…) doesn't match symbol value", "… doesn't match footprint given by symbol", or
 * "Footprint attributes don't match symbol: 'Do not populate' settings differ".
 */
function mismatchAspect(message: string): string | undefined {
  if (/^Value \(/.test(message)) return "value";
  if (/doesn't match footprint given by symbol/.test(message)) return "footprint";
  const attribute = /'([^']+)' settings differ/.exec(message)?.[1];
  return attribute ? attribute.toLowerCase().replace(/[^a-z0-9]+/g, "_") : undefined;
}

/** The first word of `text` that is a known reference designator (references are never translated). */
function refInText(text: string, refs: Set<string>): string | undefined {
  return text.split(/[^A-Za-z0-9_#+-]+/).find((word) => refs.has(word));
}

/**
 * How the project rates a board rule (`board.design_settings.rule_severities` in the
 * `.kicad_pro`), with KiCad's default when it says nothing; `ignore` turns the rule off.
 */
export function boardRuleSeverity(design: Design, rule: string, fallback: Severity | "ignore"): Severity | "ignore" {
  const rated = boardRuleSeverities(design.project.projectFile)[rule];
  return rated === "error" || rated === "warning" || rated === "ignore" ? rated : fallback;
}

function boardRuleSeverities(projectFile: string): Record<string, unknown> {
  if (!existsSync(projectFile)) return {};
  try {
    const pro = JSON.parse(readFileSync(projectFile, "utf8")) as { board?: { design_settings?: { rule_severities?: Record<string, unknown> } } };
    return pro.board?.design_settings?.rule_severities ?? {};
  } catch {
    return {};
  }
}

/** Components against footprints, and the native netlist against every pad's net. */
export function nativeParity(design: Design): Finding[] {
  const board = design.board;
  if (!board) return [];
  const file = repoPath(design, design.project.board!);
  const findings: Finding[] = [];
  const add = (rule: string, ref: string, message: string, extra: { pin?: string; net?: string; aspect?: string } = {}) => {
    // KiCad 9 rates every parity rule a warning unless the project says otherwise.
    const severity = boardRuleSeverity(design, rule, "warning");
    if (severity === "ignore") return;
    const { aspect, ...where } = extra;
    const key = ["parity", rule, where.pin ? `${ref}.${where.pin}` : ref, ...(aspect ? [aspect] : [])].join(":");
    findings.push({ check: "parity", rule, severity, message, key, location: { file, ref, ...where } });
  };

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
    if (fp.value !== c.value) {
      add("footprint_symbol_mismatch", c.ref, `${c.ref}: board value ${quote(fp.value)} differs from schematic value ${quote(c.value)}`, { aspect: "value" });
    }
    if (c.footprint && fp.libId !== c.footprint) {
      add("footprint_symbol_mismatch", c.ref, `${c.ref}: board footprint ${quote(fp.libId)} differs from schematic footprint ${quote(c.footprint)}`, { aspect: "footprint" });
    }
    if (fp.ref !== c.ref) add("footprint_symbol_mismatch", c.ref, `${c.ref}: board reference is ${quote(fp.ref)}`, { aspect: "reference" });
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
