/**
 * The `parity` family: does the board match the schematic?
 *
 * copperhead compares natively, the way pcbnew's schematic parity test does it
 * (DRC_TEST_PROVIDER_SCHEMATIC_PARITY): footprints are matched to components by reference;
 * each pair is compared on value, footprint, DNP and BOM exclusion, and pad by pad on nets;
 * footprints with a reference used before, components with no footprint and footprints with no
 * component are findings of their own. It reports what `kicad-cli pcb drc --schematic-parity`
 * reports, one for one and with the same severities (the project's rule severities, KiCad's
 * `warning` by default) and exclusions, on every project of both corpora, so DRC runs without
 * `--schematic-parity` and a change that leaves the board's bytes alone never re-runs it.
 *
 * Keys are `parity:<rule>:<ref>[.<pad>][:<aspect>]`: the aspect says which field of a
 * footprint disagrees (`value`, `footprint`, `do_not_populate`, `exclude_from_bill_of_materials`).
 * `kicadParityFindings` turns kicad-cli's own parity list into the same keys, so the two
 * witnesses can be compared finding for finding.
 */
import { existsSync, readFileSync } from "node:fs";
import type { Footprint, Pad } from "../kicad/board/model.ts";
import type { Violation } from "../kicad/cli/kicad-cli.ts";
import { child, childText, text } from "../kicad/sexpr/index.ts";
import { repoPath, type Design } from "../design/design.ts";
import { violationFinding } from "./kicad-findings.ts";
import type { ItemIdentity } from "./kicad-items.ts";
import { distinctKeys, familyResult, type Candidate } from "./result.ts";
import type { CheckResult, Finding, Severity } from "./types.ts";

export function checkParity(design: Design, strict: boolean): CheckResult {
  return familyResult("parity", nativeParity(design), { strict, cleanSummary: "board matches schematic" });
}

/** What pcbnew's parity test finds, each under its own key; see the module comment. */
export function nativeParity(design: Design): Finding[] {
  const board = design.board;
  if (!board) return [];
  const file = repoPath(design, design.project.board!);
  const settings = boardSettings(design.project.projectFile);
  const found: Candidate[] = [];
  /** `items` are the footprints and pads KiCad attaches, which is what an exclusion names. */
  const add = (
    rule: string,
    ref: string,
    message: string,
    at: Footprint | undefined,
    items: Array<Footprint | Pad>,
    extra: { pin?: string; net?: string; aspect?: string } = {},
  ) => {
    const severity = settings.severity(rule);
    if (severity === "ignore") return;
    const uuids = items.map((item) => uuidOf(item.node));
    if (settings.excluded(rule, at, uuids)) return;
    const key = [
      "parity",
      rule,
      extra.pin !== undefined ? `${ref}.${extra.pin}` : ref,
      ...(extra.aspect ? [extra.aspect] : []),
    ].join(":");
    // Placed where KiCad's parity marker is: at the footprint, on its side of the board.
    const place = at ? { layer: at.layer, x: at.at.x, y: at.at.y } : {};
    const location = {
      file,
      ref,
      ...(extra.pin !== undefined ? { pin: extra.pin } : {}),
      ...(extra.net ? { net: extra.net } : {}),
      ...place,
    };
    found.push({ finding: { check: "parity", rule, severity, message, key, location }, order: uuids.join("+") });
  };

  const footprints = board.footprints();
  // A reference seen before (KiCad compares them ignoring case) makes a duplicate.
  const first = new Map<string, Footprint>();
  for (const fp of footprints) {
    const earlier = first.get(fp.ref.toLowerCase());
    if (!earlier) first.set(fp.ref.toLowerCase(), fp);
    else if (!fp.attributes.includes("board_only"))
      add("duplicate_footprints", fp.ref, `${fp.ref} is on the board more than once`, fp, [fp, earlier]);
  }

  const pinsOf = new Map<string, Map<string, string>>();
  for (const net of design.netlist.nets) {
    for (const node of net.nodes) {
      const pins = pinsOf.get(node.ref) ?? new Map<string, string>();
      if (!pins.has(node.pin)) pins.set(node.pin, net.name);
      pinsOf.set(node.ref, pins);
    }
  }
  const components = design.components.filter((c) => c.onBoard);
  const byRef = new Map<string, Footprint>();
  for (const fp of footprints) if (!byRef.has(fp.ref)) byRef.set(fp.ref, fp);

  for (const c of components) {
    const fp = byRef.get(c.ref);
    if (!fp) {
      add(
        "missing_footprint",
        c.ref,
        `${c.ref} (${c.value}) is in the schematic but has no footprint on the board`,
        undefined,
        [],
      );
      continue;
    }
    const mismatch = (aspect: string, message: string) =>
      add("footprint_symbol_mismatch", c.ref, message, fp, [fp], { aspect });
    // The value and footprint KiCad loaded (a KiCad 6 root's instance rows override the
    // fields); the netlist pcbnew compares with writes an empty value as `~`, read literally.
    const symbol = c.symbols[0]!;
    const value = symbol.value || "~";
    if (fp.value !== value)
      mismatch("value", `${c.ref}: board value ${quote(fp.value)} differs from schematic value ${quote(value)}`);
    if (fp.libId !== symbol.footprint)
      mismatch(
        "footprint",
        `${c.ref}: board footprint ${quote(fp.libId)} differs from schematic footprint ${quote(symbol.footprint)}`,
      );
    if (fp.attributes.includes("dnp") !== c.dnp)
      mismatch(
        "do_not_populate",
        `${c.ref}: 'Do not populate' is ${onOff(c.dnp)} in the schematic, ${onOff(!c.dnp)} on the board`,
      );
    if (fp.attributes.includes("exclude_from_bom") !== !c.inBom) {
      mismatch(
        "exclude_from_bill_of_materials",
        `${c.ref}: 'Exclude from bill of materials' is ${onOff(!c.inBom)} in the schematic, ${onOff(c.inBom)} on the board`,
      );
    }

    const pins = pinsOf.get(c.ref) ?? new Map<string, string>();
    for (const pad of fp.pads) {
      if (!canHaveNumber(pad)) continue;
      const expected = pins.get(pad.number);
      const actual = pad.net?.name ?? "";
      const conflict = (message: string) =>
        add("net_conflict", c.ref, `${c.ref} pad ${pad.number}: ${message}`, fp, [pad], {
          pin: pad.number,
          net: expected,
        });
      if (actual && expected === undefined) conflict(`on ${quote(actual)}, but the symbol has no pin ${pad.number}`);
      else if (!actual && expected) conflict(`on no net, but the schematic puts it on ${quote(expected)}`);
      else if (
        expected !== undefined &&
        actual !== expected &&
        !(actual.startsWith("unconnected-") && actual.startsWith(expected))
      ) {
        conflict(`on ${quote(actual)}, but the schematic puts it on ${quote(expected)}`);
      }
    }
    const numbers = new Set(fp.pads.map((pad) => pad.number));
    for (const [pin, net] of pins) {
      if (!numbers.has(pin))
        add("net_conflict", c.ref, `${c.ref} pin ${pin} (${net}) has no pad on footprint ${fp.libId}`, fp, [fp], {
          pin,
          net,
        });
    }
  }

  const inSchematic = new Set(components.map((c) => c.ref));
  for (const fp of footprints) {
    if (fp.attributes.includes("board_only") || inSchematic.has(fp.ref)) continue;
    add("extra_footprint", fp.ref, `${fp.ref} (${fp.value}) is on the board but not in the schematic`, fp, [fp]);
  }
  return distinctKeys(found);
}

/** Mechanical pads carry no number: NPTH holes, and pads with no copper (paste apertures). */
function canHaveNumber(pad: Pad): boolean {
  const type = text(pad.node, 2);
  if (type === "np_thru_hole") return false;
  if (type !== "smd" && type !== "connect") return true;
  const layers = child(pad.node, "layers");
  return (layers?.items.slice(1) ?? []).some((layer) => layer.type === "atom" && /\.Cu"?$/.test(layer.raw));
}

function uuidOf(node: Footprint["node"]): string {
  return childText(node, "uuid") ?? childText(node, "tstamp") ?? NIL_UUID;
}

const NIL_UUID = "00000000-0000-0000-0000-000000000000";

interface BoardSettings {
  severity(rule: string): Severity | "ignore";
  excluded(rule: string, at: Footprint | undefined, uuids: string[]): boolean;
}

/**
 * The project's board rule severities (`board.design_settings.rule_severities` in the
 * `.kicad_pro`; KiCad 9 rates every parity rule a warning) and DRC exclusions, each
 * `rule|x|y|uuid|uuid` with the footprint's position in nanometres, as pcbnew writes them.
 */
function boardSettings(projectFile: string): BoardSettings {
  const settings = readBoardSettings(projectFile);
  const severities = settings.rule_severities ?? {};
  const exclusions = new Set(
    (settings.drc_exclusions ?? [])
      .map((e) => (Array.isArray(e) ? e[0] : e))
      .filter((e): e is string => typeof e === "string"),
  );
  return {
    severity: (rule) => {
      const rated = severities[rule];
      return rated === "error" || rated === "warning" || rated === "ignore" ? rated : "warning";
    },
    excluded: (rule, at, uuids) => {
      if (exclusions.size === 0) return false;
      const [x, y] = at ? [Math.round(at.at.x * 1e6), Math.round(at.at.y * 1e6)] : [0, 0];
      return exclusions.has([rule, x, y, uuids[0] ?? NIL_UUID, uuids[1] ?? NIL_UUID].join("|"));
    },
  };
}

interface BoardDesignSettings {
  rule_severities?: Record<string, unknown>;
  drc_exclusions?: unknown[];
}

function readBoardSettings(projectFile: string): BoardDesignSettings {
  if (!existsSync(projectFile)) return {};
  try {
    const pro = JSON.parse(readFileSync(projectFile, "utf8")) as { board?: { design_settings?: BoardDesignSettings } };
    return pro.board?.design_settings ?? {};
  } catch {
    return {};
  }
}

/**
 * kicad-cli's `schematic_parity` list under the native check's keys: the reference and pad
 * from the items it names (by uuid, else from their description: `Footprint R1`,
 * `PTH pad 3 [GND] of J1`), the pin of "No pad found for pin 3", the aspect of a mismatch
 * from its (English) wording.
 */
export function kicadParityFindings(
  design: Design,
  violations: Violation[],
  items: Map<string, ItemIdentity>,
): Finding[] {
  const file = design.project.board!;
  const refs = [
    ...new Set([...design.components.map((c) => c.ref), ...(design.board?.footprints().map((f) => f.ref) ?? [])]),
  ].sort((a, b) => b.length - a.length);
  const found = violations.flatMap((violation): Candidate[] => {
    const candidate = violationFinding("parity", violation, { design, identify: (uuid) => items.get(uuid), file });
    if (!candidate) return [];
    const { finding, order } = candidate;
    const described = violation.items.map((item) => item.description);
    const ref =
      finding.location?.ref ??
      described.map((d) => refInDescription(d, refs)).find(Boolean) ??
      refs.find((r) => violation.description.includes(`${r} `));
    const pin =
      finding.location?.pin ??
      described.map(padInDescription).find((p) => p !== undefined) ??
      /No pad found for pin (\S+)/.exec(violation.description)?.[1];
    const aspect = finding.rule === "footprint_symbol_mismatch" ? mismatchAspect(violation.description) : undefined;
    const key = ref
      ? ["parity", finding.rule, pin !== undefined ? `${ref}.${pin}` : ref, ...(aspect ? [aspect] : [])].join(":")
      : finding.key;
    return [{ finding: { ...finding, key, location: { ...finding.location!, ...(ref ? { ref } : {}) } }, order }];
  });
  return distinctKeys(found);
}

function refInDescription(description: string, refs: string[]): string | undefined {
  const owner = /^Footprint (.+)$/.exec(description)?.[1] ?? /\] of (.+?)(?: on \S+)?$/.exec(description)?.[1];
  return owner === undefined ? undefined : (refs.find((r) => owner === r || owner.startsWith(`${r} `)) ?? owner);
}

function padInDescription(description: string): string | undefined {
  return /^(?:\S+ )?[Pp]ad (\S*) \[/.exec(description)?.[1];
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

function onOff(on: boolean): string {
  return on ? "on" : "off";
}

function quote(s: string): string {
  return JSON.stringify(s);
}
