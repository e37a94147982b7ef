/**
 * Pairs board footprints with schematic components, as KiCad's netlist updater does: by symbol
 * path first (KiCad's default, "re-link by reference" unticked), then, for what is left on both
 * sides, by reference — so a symbol moved to another sheet, or re-created with a new uuid,
 * keeps its placed and routed footprint and only its link is updated.
 *
 * A multi-unit symbol is one component with one uuid per unit; a footprint linked to any of
 * them is linked (KiCad records the first uuid of its netlist, whose order is not the file's,
 * so a board KiCad synced may hold any unit's).
 */
import type { Footprint } from "../model.ts";
import type { Component } from "../../netlist/components.ts";

/** Every symbol path a component's footprint may be linked under, its first unit's first. */
export function unitPaths(c: Component): string[] {
  const sheet = c.sheetPath.replace(/^\/[^/]+/, "");
  return [...new Set([c.symbolPath, ...c.symbols.map((s) => `${sheet}/${s.uuid}`)])];
}

export interface FootprintMatch {
  /** Footprint index → its component, by ascending footprint index. */
  matches: [number, Component][];
  /** Components with no footprint, in the input order. */
  unmatchedComponents: Component[];
  /** Indices of footprints with no component. */
  unmatchedFootprints: number[];
}

export function matchFootprints(footprints: Footprint[], components: Component[]): FootprintMatch {
  const byPath = new Map<string, Component>();
  for (const c of components) for (const p of unitPaths(c)) if (!byPath.has(p)) byPath.set(p, c);
  const matches = new Map<number, Component>();
  const used = new Set<Component>();
  const pair = (index: number, c: Component | undefined) => {
    if (!c || used.has(c) || matches.has(index)) return;
    matches.set(index, c);
    used.add(c);
  };
  footprints.forEach((fp, i) => pair(i, fp.path ? byPath.get(fp.path) : undefined));
  const byRef = new Map(components.filter((c) => !used.has(c)).map((c) => [c.ref, c]));
  footprints.forEach((fp, i) => pair(i, byRef.get(fp.ref)));
  return {
    matches: [...matches].sort(([a], [b]) => a - b),
    unmatchedComponents: components.filter((c) => !used.has(c)),
    unmatchedFootprints: footprints.map((_, i) => i).filter((i) => !matches.has(i)),
  };
}
