/**
 * The design rules a board keeps, read the way KiCad reads them: the board constraints and net
 * classes of the `.kicad_pro` (`board.design_settings.rules`, `net_settings`), and the custom
 * rules of `<project>.kicad_dru`. KiCad's defaults fill whatever a project leaves out.
 *
 * Custom rules are applied conservatively: a rule whose condition can be decided here (net
 * names and net classes compared to a string) applies only where it holds; any other condition
 * (areas, pad types, diff pairs) is assumed to hold, and only ever raises a minimum, so what
 * passes these rules passes KiCad's DRC too.
 */
import { readRepoTextIfPresent } from "../../../repo/repo-files.ts";
import { child, children, parseSexpr, text, type SList } from "../../sexpr/index.ts";

export interface NetClass {
  name: string;
  clearance: number;
  trackWidth: number;
  viaDiameter: number;
  viaDrill: number;
}

/** Constraints a custom rule can set whose minimums placement and routing keep, mm. */
export type ConstraintKind =
  | "clearance"
  | "hole_clearance"
  | "edge_clearance"
  | "courtyard_clearance"
  | "hole_to_hole"
  | "track_width"
  | "via_diameter"
  | "hole_size"
  | "annular_width";

export interface CustomRule {
  name: string;
  /** `min` of each constraint the rule sets. */
  min: Partial<Record<ConstraintKind, number>>;
  /** The rule's `(layer …)`, when it names one. */
  layer?: string;
  condition?: string;
}

/** Board-wide minimums (`board.design_settings.rules`), mm. */
export interface BoardConstraints {
  minClearance: number;
  copperEdgeClearance: number;
  holeClearance: number;
  holeToHole: number;
  minTrackWidth: number;
  minViaDiameter: number;
  minViaAnnularWidth: number;
  minThroughHole: number;
  /** Silkscreen text: DRC's smallest height and stroke. */
  minTextHeight: number;
  minTextThickness: number;
  /** The narrowest copper DRC lets join two parts of a pour or track (`connection_width`); 0 checks nothing. */
  minConnection: number;
}

/** KiCad's defaults for a project that sets nothing (pcbnew's BOARD_DESIGN_SETTINGS). */
const DEFAULT_CONSTRAINTS: BoardConstraints = {
  minClearance: 0,
  copperEdgeClearance: 0.5,
  holeClearance: 0.25,
  holeToHole: 0.25,
  minTrackWidth: 0,
  minViaDiameter: 0.5,
  minViaAnnularWidth: 0.1,
  minThroughHole: 0.3,
  minTextHeight: 0.8,
  minTextThickness: 0.08,
  minConnection: 0,
};
const DEFAULT_CLASS: NetClass = { name: "Default", clearance: 0.2, trackWidth: 0.25, viaDiameter: 0.6, viaDrill: 0.3 };

interface ProjectJson {
  board?: { design_settings?: { rules?: Record<string, unknown> } };
  net_settings?: {
    classes?: {
      name?: string;
      clearance?: number;
      track_width?: number;
      via_diameter?: number;
      via_drill?: number;
      nets?: string[];
    }[];
    netclass_patterns?: { netclass?: string; pattern?: string }[];
    netclass_assignments?: Record<string, string | string[]> | null;
  };
}

export class BoardRules {
  private readonly classes = new Map<string, NetClass>();
  private readonly explicit = new Map<string, string>();
  private readonly patterns: { pattern: RegExp; netclass: string }[] = [];
  private readonly netClassCache = new Map<string, NetClass>();
  private readonly clearanceCache = new Map<string, Map<string, number>>();
  private largest: number | undefined;

  constructor(
    readonly constraints: BoardConstraints,
    classes: NetClass[],
    assignments: { net: string; netclass: string }[],
    patterns: { pattern: string; netclass: string }[],
    readonly custom: CustomRule[],
  ) {
    for (const c of classes) this.classes.set(c.name, c);
    if (!this.classes.has("Default")) this.classes.set("Default", DEFAULT_CLASS);
    for (const a of assignments) this.explicit.set(a.net, a.netclass);
    for (const p of patterns) this.patterns.push({ pattern: wildcard(p.pattern), netclass: p.netclass });
  }

  /** The smallest silkscreen text DRC accepts: a new footprint's text is raised to it (`SilkTextMinimum`). */
  silkText(): { height: number; thickness: number } {
    return { height: this.constraints.minTextHeight, thickness: this.constraints.minTextThickness };
  }

  /** The rules of a project with none of its own: KiCad's defaults. */
  static defaults(): BoardRules {
    return new BoardRules(DEFAULT_CONSTRAINTS, [DEFAULT_CLASS], [], [], []);
  }

  /** Reads `projectFile` and the `.kicad_dru` beside it (inside `within`); a file that is missing or unreadable leaves KiCad's defaults. */
  static load(projectFile: string | undefined, within: string | null): BoardRules {
    if (!projectFile) return BoardRules.defaults();
    let pro: ProjectJson = {};
    try {
      pro = JSON.parse(readRepoTextIfPresent(projectFile, { within }) ?? "{}") as ProjectJson;
    } catch {
      // A broken project is the check's finding; placement keeps KiCad's defaults.
    }
    let dru: string | undefined;
    try {
      dru = readRepoTextIfPresent(projectFile.replace(/\.kicad_pro$/, ".kicad_dru"), { within });
    } catch {
      dru = undefined;
    }
    return BoardRules.fromProject(pro, dru);
  }

  static fromProject(pro: ProjectJson, dru?: string): BoardRules {
    const rules = pro.board?.design_settings?.rules ?? {};
    const n = (key: string, fallback: number) => (typeof rules[key] === "number" ? (rules[key] as number) : fallback);
    const constraints: BoardConstraints = {
      minClearance: n("min_clearance", DEFAULT_CONSTRAINTS.minClearance),
      copperEdgeClearance: n("min_copper_edge_clearance", DEFAULT_CONSTRAINTS.copperEdgeClearance),
      holeClearance: n("min_hole_clearance", DEFAULT_CONSTRAINTS.holeClearance),
      holeToHole: n("min_hole_to_hole", DEFAULT_CONSTRAINTS.holeToHole),
      minTrackWidth: n("min_track_width", DEFAULT_CONSTRAINTS.minTrackWidth),
      minViaDiameter: n("min_via_diameter", DEFAULT_CONSTRAINTS.minViaDiameter),
      minViaAnnularWidth: n("min_via_annular_width", DEFAULT_CONSTRAINTS.minViaAnnularWidth),
      minThroughHole: n("min_through_hole_diameter", DEFAULT_CONSTRAINTS.minThroughHole),
      minTextHeight: n("min_text_height", DEFAULT_CONSTRAINTS.minTextHeight),
      minTextThickness: n("min_text_thickness", DEFAULT_CONSTRAINTS.minTextThickness),
      minConnection: n("min_connection", DEFAULT_CONSTRAINTS.minConnection),
    };
    const ns = pro.net_settings ?? {};
    const fallback = (ns.classes ?? []).find((c) => c.name === "Default");
    const classes = (ns.classes ?? []).map((c) => ({
      name: c.name ?? "Default",
      // KiCad 8+ leaves a non-default class's unset values to the Default class.
      clearance: c.clearance ?? fallback?.clearance ?? DEFAULT_CLASS.clearance,
      trackWidth: c.track_width ?? fallback?.track_width ?? DEFAULT_CLASS.trackWidth,
      viaDiameter: c.via_diameter ?? fallback?.via_diameter ?? DEFAULT_CLASS.viaDiameter,
      viaDrill: c.via_drill ?? fallback?.via_drill ?? DEFAULT_CLASS.viaDrill,
    }));
    // KiCad 6 and 7 list each class's nets; KiCad 8+ keeps assignments and patterns.
    const assignments = (ns.classes ?? []).flatMap((c) =>
      (c.nets ?? []).map((net) => ({ net, netclass: c.name ?? "Default" })),
    );
    for (const [net, value] of Object.entries(ns.netclass_assignments ?? {})) {
      const first = Array.isArray(value) ? value[0] : value;
      if (first) assignments.push({ net, netclass: first });
    }
    const patterns = (ns.netclass_patterns ?? []).flatMap((p) =>
      p.pattern && p.netclass ? [{ pattern: p.pattern, netclass: p.netclass }] : [],
    );
    return new BoardRules(constraints, classes, assignments, patterns, dru ? parseCustomRules(dru) : []);
  }

  /** The net class of `net` ("" is no net: the Default class). */
  netClass(net: string): NetClass {
    let found = this.netClassCache.get(net);
    if (!found) {
      const name = this.explicit.get(net) ?? this.patterns.find((p) => p.pattern.test(net))?.netclass ?? "Default";
      found = this.classes.get(name) ?? this.classes.get("Default")!;
      this.netClassCache.set(net, found);
    }
    return found;
  }

  /** Copper-to-copper clearance between items on nets `a` and `b`: the larger class clearance, the board minimum, and any custom rule that may apply. */
  clearance(a: string, b: string): number {
    let row = this.clearanceCache.get(a);
    if (!row) this.clearanceCache.set(a, (row = new Map()));
    let value = row.get(b);
    if (value === undefined) {
      value = Math.max(
        this.netClass(a).clearance,
        this.netClass(b).clearance,
        this.constraints.minClearance,
        this.customMin("clearance", a, b),
      );
      row.set(b, value);
    }
    return value;
  }

  /**
   * No copper-to-copper, copper-to-hole, copper-to-edge or hole-to-hole clearance any rule of
   * the board can ask for is larger than this, whatever the nets: how far around new copper
   * the items it could be too close to lie.
   */
  largestClearance(): number {
    this.largest ??= Math.max(
      ...[...this.classes.values()].map((c) => c.clearance),
      this.constraints.minClearance,
      this.constraints.copperEdgeClearance,
      this.constraints.holeClearance,
      this.constraints.holeToHole,
      ...this.custom.flatMap((rule) =>
        (["clearance", "edge_clearance", "hole_clearance", "hole_to_hole"] as const).map((kind) => rule.min[kind] ?? 0),
      ),
    );
    return this.largest;
  }

  /** Copper to the board edge. */
  edgeClearance(net: string): number {
    return Math.max(this.constraints.copperEdgeClearance, this.customMin("edge_clearance", net, ""));
  }

  /** Copper to a hole of another item. */
  holeClearance(a: string, b: string): number {
    return Math.max(this.constraints.holeClearance, this.customMin("hole_clearance", a, b));
  }

  /** Hole to hole, edge to edge. */
  holeToHole(): number {
    return Math.max(this.constraints.holeToHole, this.customMin("hole_to_hole", "", ""));
  }

  /** Courtyard to courtyard (KiCad's default is none: they must only not overlap). */
  courtyardClearance(): number {
    return this.customMin("courtyard_clearance", "", "");
  }

  /** Track width for new tracks of `net`: its class's, never below the board's or a rule's minimum. */
  trackWidth(net: string): number {
    return Math.max(
      this.netClass(net).trackWidth,
      this.constraints.minTrackWidth,
      this.customMin("track_width", net, net),
    );
  }

  /** Via diameter and drill for new vias of `net`, kept above the board's minimums. */
  via(net: string): { diameter: number; drill: number } {
    const c = this.netClass(net);
    const drill = Math.max(c.viaDrill, this.constraints.minThroughHole, this.customMin("hole_size", net, net));
    const diameter = Math.max(
      c.viaDiameter,
      this.constraints.minViaDiameter,
      drill + 2 * this.constraints.minViaAnnularWidth,
      this.customMin("via_diameter", net, net),
    );
    return { diameter, drill };
  }

  /** The largest `min` of `kind` among custom rules that may apply to items on nets `a` and `b`. */
  private customMin(kind: ConstraintKind, a: string, b: string): number {
    let out = 0;
    for (const rule of this.custom) {
      const min = rule.min[kind];
      if (min === undefined || min <= out) continue;
      if (mayApply(rule.condition, { a, b, classA: this.netClass(a).name, classB: this.netClass(b).name })) out = min;
    }
    return out;
  }
}

/** KiCad's wildcard patterns (`*`, `?`) as an anchored regular expression. */
function wildcard(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`);
}

/** Reads the custom rules of a `.kicad_dru` (a `(version 1)` followed by `(rule …)` forms). */
export function parseCustomRules(source: string): CustomRule[] {
  let root: SList;
  try {
    root = parseSexpr(`(kicad_dru ${source}\n)`).root;
  } catch {
    return [];
  }
  return children(root, "rule").map((rule) => {
    const min: Partial<Record<ConstraintKind, number>> = {};
    for (const constraint of children(rule, "constraint")) {
      const kind = text(constraint, 1) as ConstraintKind;
      const value = child(constraint, "min");
      const mm = value ? lengthMm(text(value, 1)) : undefined;
      if (mm !== undefined) min[kind] = Math.max(min[kind] ?? 0, mm);
    }
    return {
      name: text(rule, 1) ?? "",
      min,
      layer: text(child(rule, "layer") ?? rule, 1),
      condition: text(child(rule, "condition") ?? rule, 1),
    };
  });
}

/** A DRU length (`0.1mm`, `4mil`, `0.01in`, `100um`, bare mm) in mm. */
function lengthMm(raw: string | undefined): number | undefined {
  const m = raw?.trim().match(/^(-?[\d.]+)\s*(mm|mil|mils|in|um)?$/);
  if (!m) return undefined;
  const value = Number(m[1]);
  const scale = { mm: 1, mil: 0.0254, mils: 0.0254, in: 25.4, um: 0.001 }[m[2] ?? "mm"] ?? 1;
  return Number.isFinite(value) ? value * scale : undefined;
}

interface Pair {
  a: string;
  b: string;
  classA: string;
  classB: string;
}

/**
 * Whether a rule condition may hold for a pair of items on these nets, either way round. Net
 * name and net class comparisons are decided; every other term may hold.
 */
function mayApply(condition: string | undefined, pair: Pair): boolean {
  if (!condition) return true;
  const swapped: Pair = { a: pair.b, b: pair.a, classA: pair.classB, classB: pair.classA };
  return [pair, swapped].some((p) =>
    condition.split("||").some((term) => term.split("&&").every((atom) => atomMayHold(atom, p))),
  );
}

function atomMayHold(atom: string, pair: Pair): boolean {
  const m = atom
    .trim()
    .replace(/^\(+|\)+$/g, "")
    .match(/^([AB])\.(NetClass|NetName)\s*(==|!=)\s*'([^']*)'$/);
  if (!m) return true;
  const [, side, field, op, value] = m;
  const actual = field === "NetClass" ? (side === "A" ? pair.classA : pair.classB) : side === "A" ? pair.a : pair.b;
  const equal = wildcard(value!).test(actual);
  return op === "==" ? equal : !equal;
}
