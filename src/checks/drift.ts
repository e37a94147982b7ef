/**
 * The `drift` check family: documentation that no longer matches the design.
 *
 * 1. BOM drift. The generated table in `<docs>/BOM.md` must list exactly the components in the
 *    BOM, with the design's value, footprint and MPN. One item per disagreement, keyed
 *    `drift:bom:<REF>:<value|footprint|mpn|missing|extra|duplicate>`.
 * 2. Pinout drift. The generated tables in `<docs>/PINOUT.md`, when the repo has one, must list
 *    every connector pin with its name and net, keyed
 *    `drift:pinout:<REF>.<PIN>:<net|name|missing|extra>`.
 * 3. Stale references. A doc that names, in backticks, a ref or net the design does not have,
 *    keyed `drift:stale-ref:<doc>:<REF>` or `drift:stale-net:<doc>:<NET>`.
 *
 * Backticks hold many things that are neither (commands, paths, values), and a false positive
 * fails the gate, so a span counts only when it looks like one:
 * - a ref: `R3`, `J1.A9`, `R2.value` — a 1–3 letter prefix used by this design or a common
 *   designator prefix (R, C, U, J, SW, TP, …), then digits; `UART1` or `USB2` are not refs;
 * - a net: the span sits next to the word net/nets/rail/signal ("the `LED_K` net", "nets `A`,
 *   `B`"), or has the shape of a supply rail (`+3V3`, `-12V`, `1V8`, `GND`, `AGND`, `VCC_IO`,
 *   `VBUS`); a net matches the design by full name (`/CC1`) or by its name within its sheet.
 *
 * Not scanned: BOM.md and PINOUT.md (their tables are checked above), CHANGELOG.md,
 * DECISIONS.md and changes/ (history, which rightly names parts since removed), fenced code
 * blocks, and `check:` rule lines (the `requirements` family owns those). A name a doc's own rules declare absent
 * (`check: R9 absent`, `check: net VPP absent`) is missing on purpose, so prose about it is
 * not stale either.
 *
 * Every item is an error: drift fails the check. Stale docs are cheap to fix and,
 * left alone, mislead the next reader — human or agent; `do` only blocks on drift it creates,
 * because findings are compared by key against the baseline.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join, posix } from "node:path";
import { CopperheadError } from "../errors.ts";
import { readRepoDoc } from "../repo/repo-files.ts";
import { bomLines, BOM_FILE, parseBom, type BomTable } from "../spec/bom.ts";
import { isGeneratedDoc } from "../spec/generated-docs.ts";
import { codeSpanMentions, type Mention } from "../spec/mentions.ts";
import { parsePinout, pinoutConnectors, pinoutDifferences, PINOUT_FILE, type PinoutTable } from "../spec/pinout.ts";
import { repoPath, type Design } from "../design/design.ts";
import { familyResult, skippedResult } from "./result.ts";
import type { CheckResult, Finding } from "./types.ts";

export type DriftKind =
  | "bom_table"
  | "bom_missing_row"
  | "bom_extra_row"
  | "bom_duplicate_row"
  | "bom_value"
  | "bom_footprint"
  | "bom_mpn"
  | "bom_dnp"
  | "pinout_table"
  | "pinout_missing"
  | "pinout_extra"
  | "pinout_name"
  | "pinout_net"
  | "stale_ref"
  | "stale_net";

/** One disagreement between a doc and the design; `sync` reports these as they are. */
export interface DriftItem {
  kind: DriftKind;
  /** Repo-relative path of the doc. */
  doc: string;
  line?: number;
  /** What the doc says; null when it says nothing (a missing row). */
  claim: string | null;
  /** What the design says; null when the design has nothing (a removed part). */
  actual: string | null;
  key: string;
  ref?: string;
  net?: string;
  message: string;
}

export interface DriftOptions {
  /** Docs folder, relative to the repo root (the config's `docs`) or absolute. */
  docsDir: string;
}

export interface DriftScan {
  /** Repo-relative path of BOM.md. */
  bomFile: string;
  bomPresent: boolean;
  items: DriftItem[];
}

/** Docs under the docs folder that record history, so naming removed parts is correct there. */
const HISTORY_DOCS = new Set(["CHANGELOG.md", "DECISIONS.md"]);
const HISTORY_DIRS = ["changes/"];

export function scanDrift(design: Design, options: DriftOptions): DriftScan {
  const root = design.project.repoRoot;
  const docsDir = repoPath(design, isAbsolute(options.docsDir) ? options.docsDir : join(root, options.docsDir)) || ".";
  const bomFile = posix.join(docsDir, BOM_FILE);
  const bom = readRepoDoc(root, bomFile);
  const bomPresent = bom !== undefined;
  const items: DriftItem[] = bomPresent ? bomDrift(design, bomFile, bom) : [];
  const pinoutFile = posix.join(docsDir, PINOUT_FILE);
  const pinout = readRepoDoc(root, pinoutFile);
  if (pinout !== undefined) items.push(...pinoutDrift(design, pinoutFile, pinout));
  for (const doc of proseDocs(root, docsDir)) {
    items.push(...staleMentions(design, doc, readRepoDoc(root, doc) ?? ""));
  }
  return { bomFile, bomPresent, items };
}

export function checkDrift(design: Design, options: DriftOptions): CheckResult {
  const scan = scanDrift(design, options);
  if (!scan.bomPresent) return skippedResult("drift", `${scan.bomFile} not found: run copperhead init`);
  const findings: Finding[] = scan.items.map((item) => ({
    check: "drift",
    rule: item.kind.startsWith("bom_")
      ? "bom"
      : item.kind.startsWith("pinout_")
        ? "pinout"
        : item.kind === "stale_ref"
          ? "stale-ref"
          : "stale-net",
    severity: "error",
    message: withFix(item),
    key: item.key,
    location: {
      file: item.doc,
      ...(item.line !== undefined ? { line: item.line } : {}),
      ...(item.ref !== undefined ? { ref: item.ref } : {}),
      ...(item.net !== undefined ? { net: item.net } : {}),
    },
  }));
  return familyResult("drift", findings, { cleanSummary: "BOM, pinout and docs agree with the design" });
}

/** The command that fixes a drift item, in its message: wherever it is read (the hook, CI), the way out is named. */
export const SYNC_FIX = "copperhead sync --resolve";

function withFix(item: DriftItem): string {
  // A table that cannot be parsed names its own fix (init --force).
  if (item.kind === "bom_table" || item.kind === "pinout_table") return item.message;
  if (item.kind === "stale_ref" || item.kind === "stale_net")
    return `${item.message}; fix: reword it, or run \`${SYNC_FIX}\` with a model (--model)`;
  return `${item.message}; fix: run \`${SYNC_FIX}\` (no model needed)`;
}

function bomDrift(design: Design, bomFile: string, markdown: string): DriftItem[] {
  let table: BomTable | undefined;
  try {
    table = parseBom(markdown, bomFile);
  } catch (err) {
    if (!(err instanceof CopperheadError) || err.code !== "parse_error") throw err;
    return [generatedTableItem("bom", bomFile, err.message, err.details.line as number | undefined)];
  }
  if (!table)
    return [
      generatedTableItem("bom", bomFile, `${bomFile} has no copperhead BOM table (its marker comments are missing)`),
    ];

  const items: DriftItem[] = [];
  const item = (
    kind: DriftKind,
    ref: string,
    line: number,
    claim: string | null,
    actual: string | null,
    what: string,
    message: string,
  ) =>
    items.push({
      kind,
      doc: bomFile,
      line,
      ref,
      claim,
      actual,
      key: `drift:bom:${ref}:${what}`,
      message: `${bomFile}:${line}: ${message}`,
    });
  const expected = new Map(bomLines(design.components).map((l) => [l.ref, l]));
  const seen = new Set<string>();
  for (const row of table.rows) {
    if (seen.has(row.ref)) {
      item("bom_duplicate_row", row.ref, row.line, row.ref, null, "duplicate", `${row.ref} is listed twice`);
      continue;
    }
    seen.add(row.ref);
    const want = expected.get(row.ref);
    if (!want) {
      item(
        "bom_extra_row",
        row.ref,
        row.line,
        row.ref,
        null,
        "extra",
        `${row.ref} has a BOM row but is not a BOM component of the design`,
      );
      continue;
    }
    if (row.dnp !== want.dnp) {
      const fitted = (dnp: string) => (dnp ? "not fitted (DNP)" : "fitted");
      item(
        "bom_dnp",
        row.ref,
        row.line,
        row.dnp,
        want.dnp,
        "dnp",
        `${row.ref} is ${fitted(row.dnp)} in the BOM but ${fitted(want.dnp)} in the design`,
      );
    }
    for (const field of ["value", "footprint", "mpn"] as const) {
      if (row[field] === want[field]) continue;
      const says = `${row.ref} ${FIELD_LABEL[field]} is ${show(row[field])} in the BOM but ${show(want[field])} in the design`;
      item(`bom_${field}`, row.ref, row.line, row[field], want[field], field, says);
    }
  }
  for (const [ref, want] of expected) {
    if (!seen.has(ref))
      item(
        "bom_missing_row",
        ref,
        table.beginLine,
        null,
        want.value,
        "missing",
        `${ref} (${want.value}) is in the design but has no BOM row`,
      );
  }
  return items;
}

/** One item per pin row that disagrees with the design's connectors: a net rename shows up here. */
function pinoutDrift(design: Design, file: string, markdown: string): DriftItem[] {
  let table: PinoutTable | undefined;
  try {
    table = parsePinout(markdown, file);
  } catch (err) {
    if (!(err instanceof CopperheadError) || err.code !== "parse_error") throw err;
    return [generatedTableItem("pinout", file, err.message, err.details.line as number | undefined)];
  }
  if (!table)
    return [
      generatedTableItem("pinout", file, `${file} has no copperhead pinout tables (their marker comments are missing)`),
    ];
  return pinoutDifferences(pinoutConnectors(design), table).map((d) => ({
    kind: `pinout_${d.what}` as const,
    doc: file,
    line: d.line ?? table.beginLine,
    ref: d.ref,
    claim: d.claim,
    actual: d.actual,
    key: `drift:pinout:${d.ref}.${d.pin}:${d.what}`,
    message: `${file}:${d.line ?? table.beginLine}: ${d.ref} pin ${d.pin} ${d.what === "missing" ? `(${d.actual}) has no row` : d.what === "extra" ? `has a row (${d.claim}) but ${d.ref} has no such pin` : `${d.what} is ${show(d.claim)} in the pinout but ${show(d.actual)} in the design`}`,
  }));
}

const FIELD_LABEL = { value: "value", footprint: "footprint", mpn: "MPN" } as const;

function show(text: string): string {
  return text === "" ? "empty" : JSON.stringify(text);
}

/** A generated doc whose tables cannot be read (markers missing or broken). */
function generatedTableItem(doc: "bom" | "pinout", file: string, message: string, line?: number): DriftItem {
  const fix = "run copperhead init --force to regenerate it";
  return {
    kind: `${doc}_table`,
    doc: file,
    line,
    claim: null,
    actual: null,
    key: `drift:${doc}:table`,
    message: `${message}; ${fix}`,
  };
}

/** Markdown docs whose backticked mentions are claims about the current design. */
function proseDocs(root: string, docsDir: string): string[] {
  if (!existsSync(join(root, docsDir))) return [];
  const docs: string[] = [];
  for (const path of new Bun.Glob("**/*.md").scanSync({ cwd: join(root, docsDir), followSymlinks: false })) {
    const rel = path.split("\\").join("/");
    if (isGeneratedDoc(rel) || HISTORY_DOCS.has(rel) || HISTORY_DIRS.some((d) => rel.startsWith(d))) continue;
    docs.push(posix.join(docsDir, rel));
  }
  return docs.sort();
}

/** Designator prefixes common enough that an unknown `XX9` with one is surely a ref. */
const COMMON_REF_PREFIXES = [
  "BT",
  "BZ",
  "C",
  "CN",
  "D",
  "DS",
  "F",
  "FB",
  "FID",
  "H",
  "IC",
  "J",
  "JP",
  "K",
  "L",
  "LED",
  "LS",
  "M",
  "MH",
  "MK",
  "P",
  "Q",
  "R",
  "RN",
  "RV",
  "S",
  "SW",
  "T",
  "TP",
  "U",
  "VR",
  "X",
  "Y",
];
const REF_RE = /^([A-Z]{1,3})(\d+)(?:\.[A-Za-z0-9_+-]+)?$/;
const RAIL_RE = /^(?:[+-]\d+(?:\.\d+)?V\d*|[+-]?\d+V\d+)$/;
const SUPPLY_RE = /^(?:[ADPS]?GND[A-Z]?|V(?:CC|DD|SS|EE|BUS|BAT|IN|SYS|IO|REF)[A-Z0-9]?)(?:_[A-Za-z0-9_]+)?$/;
const NET_WORD_BEFORE = /\b(?:nets?|rails?|signals?)\s*(?:`[^`]*`\s*(?:,|and|or|&)\s*)*$/i;
const NET_WORD_AFTER = /^\s*(?:net|nets|rail|rails|signal|signals)\b/i;

function staleMentions(design: Design, doc: string, markdown: string): DriftItem[] {
  const refs = new Set(design.components.map((c) => c.ref));
  const prefixes = new Set([...COMMON_REF_PREFIXES, ...design.components.map((c) => REF_RE.exec(c.ref)?.[1] ?? "")]);
  const nets = new Set<string>();
  for (const net of design.netlist.nets) {
    nets.add(net.name);
    if (net.name.startsWith("/")) nets.add(net.name.slice(net.name.lastIndexOf("/") + 1));
  }
  const absent = declaredAbsent(markdown);
  const items = new Map<string, DriftItem>();
  for (const mention of codeSpanMentions(markdown)) {
    const item = classify(mention, doc, refs, prefixes, nets);
    if (item && !absent.has(item.ref ?? item.net ?? "") && !items.has(item.key)) items.set(item.key, item);
  }
  return [...items.values()];
}

// The space after the opening backtick belongs to the backtick, so no run of spaces can be
// split two ways (which made a long one quadratic).
const ABSENT_RULE_RE = /^\s*[-*+]\s+check:\s*(?:`\s*)?(?:net\s+)?"?([^\s"`]+)"?\s+absent\b/i;

/** Refs and nets named by the doc's `check: <X> absent` rules. */
function declaredAbsent(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const line of markdown.split(/\r?\n/)) {
    const name = ABSENT_RULE_RE.exec(line)?.[1];
    if (name) names.add(name);
  }
  return names;
}

function classify(
  m: Mention,
  doc: string,
  refs: Set<string>,
  prefixes: Set<string>,
  nets: Set<string>,
): DriftItem | undefined {
  const token = m.text;
  if (/\s/.test(token)) return undefined;
  const ref = REF_RE.exec(token);
  const refName = ref ? `${ref[1]}${ref[2]}` : undefined;
  if ((refName && refs.has(refName)) || nets.has(token)) return undefined;
  const netContext = NET_WORD_BEFORE.test(m.before) || NET_WORD_AFTER.test(m.after);
  if (netContext || (!ref && (RAIL_RE.test(token) || SUPPLY_RE.test(token)))) {
    return {
      kind: "stale_net",
      doc,
      line: m.line,
      net: token,
      claim: token,
      actual: null,
      key: `drift:stale-net:${doc}:${token}`,
      message: `${doc}:${m.line}: net \`${token}\` does not exist in the design`,
    };
  }
  if (ref && refName && prefixes.has(ref[1]!)) {
    return {
      kind: "stale_ref",
      doc,
      line: m.line,
      ref: refName,
      claim: refName,
      actual: null,
      key: `drift:stale-ref:${doc}:${refName}`,
      message: `${doc}:${m.line}: \`${token}\` names ${refName}, which does not exist in the design`,
    };
  }
  return undefined;
}
