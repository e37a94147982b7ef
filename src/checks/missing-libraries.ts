/**
 * One missing library, reported once.
 *
 * A library the design names but no table holds makes KiCad report every part from it on its
 * own: ERC's `lib_symbol_issues` per symbol and `footprint_link_issues` per symbol whose
 * Footprint field names it, DRC's `lib_footprint_issues` per footprint. A vendor design with a
 * dozen such libraries gives hundreds of warnings that say one thing each. The report keeps them
 * all (`--json` equals kicad-cli per family); the formats a person reads (text, GitHub
 * annotations, SARIF) show each library once instead, with how many symbols and footprints it
 * explains. `copperhead doctor` names the table line that adds it.
 */
import type { BaselineState, CheckId, Finding, Severity } from "./types.ts";

export interface MissingLibrary {
  kind: "symbol" | "footprint";
  library: string;
  /** Symbols it explains (ERC findings) and footprints (DRC findings). */
  symbols: number;
  footprints: number;
  /** The findings it stands for. */
  findings: Finding[];
  /** The one finding the formats show for it (rule `missing_library`). */
  finding: Finding;
}

/** KiCad's rules that report a part whose library is missing, and what kind of library each names. */
const RULE_KIND: Record<string, MissingLibrary["kind"]> = {
  lib_symbol_issues: "symbol",
  footprint_link_issues: "footprint",
  lib_footprint_issues: "footprint",
};

/**
 * KiCad's wordings (the UI language is pinned to English): "The current configuration does not
 * include the symbol library 'X'", "The footprint library 'X' is not enabled in the current
 * configuration", and, before KiCad 8, the same without "symbol". Other messages of these rules
 * ("Symbol 'R' not found in symbol library 'X'") are about one part and stay as they are.
 */
const MISSING =
  /^(?:The current configuration does not include the (?:symbol |footprint )?library '([^']+)'|The (?:symbol |footprint )?library '([^']+)' is not enabled)/;

const SEVERITY_ORDER: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

/** The findings about missing libraries, one group per library; `rest` keeps the others in order. */
export function groupMissingLibraries(findings: Finding[]): { libraries: MissingLibrary[]; rest: Finding[] } {
  const groups = new Map<string, MissingLibrary>();
  const rest: Finding[] = [];
  for (const f of findings) {
    const kind = RULE_KIND[f.rule];
    const match = kind && (f.check === "erc" || f.check === "drc") ? MISSING.exec(f.message) : null;
    if (!kind || !match) {
      rest.push(f);
      continue;
    }
    const library = (match[1] ?? match[2])!;
    const id = `${kind}\0${library}`;
    const group = groups.get(id) ?? { kind, library, symbols: 0, footprints: 0, findings: [], finding: f };
    group.findings.push(f);
    if (f.check === "erc") group.symbols++;
    else group.footprints++;
    groups.set(id, group);
  }
  const libraries = [...groups.values()]
    .sort((a, b) => (a.kind === b.kind ? (a.library < b.library ? -1 : 1) : a.kind === "symbol" ? -1 : 1))
    .map((g) => ({ ...g, finding: standIn(g) }));
  return { libraries, rest };
}

/** What a missing library explains: `17 symbols`, `3 symbols, 3 footprints`. */
export function describeExplained(lib: Pick<MissingLibrary, "symbols" | "footprints">): string {
  const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
  return [lib.symbols && plural(lib.symbols, "symbol"), lib.footprints && plural(lib.footprints, "footprint")]
    .filter(Boolean)
    .join(", ");
}

function standIn(group: MissingLibrary): Finding {
  const first = group.findings[0]!;
  const severity = group.findings.map((f) => f.severity).sort((a, b) => SEVERITY_ORDER[a] - SEVERITY_ORDER[b])[0]!;
  const check: CheckId = first.check;
  const states = new Set(group.findings.map((f) => f.baselineState).filter((s): s is BaselineState => s !== undefined));
  const baselineState: BaselineState | undefined = states.has("new") ? "new" : [...states][0];
  return {
    check,
    rule: "missing_library",
    severity,
    message: `${group.kind} library "${group.library}" is in no library table (or is disabled): ${describeExplained(group)} from it cannot be checked; \`copperhead doctor\` says how to add it`,
    key: `${check}:missing_library:${group.kind}:${group.library}`,
    ...(first.location ? { location: { file: first.location.file } } : {}),
    ...(baselineState ? { baselineState } : {}),
  };
}
