/**
 * The verify phase of `copperhead sync`: does everything that describes the design
 * still agree with it? Writes nothing, needs no key and no network. Drift is what copperhead
 * may resolve; requirement violations are reported for a human and never touched.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { loadDesign, type Design } from "../design/design.ts";
import { scanDrift } from "./drift.ts";
import { nativeParity } from "./parity.ts";
import { evaluateRequirements } from "./requirements.ts";
import { CopperheadError } from "../errors.ts";
import { BOM_FILE } from "../spec/bom.ts";
import { GENERATED_DOCS } from "../spec/generated-docs.ts";
import { PINOUT_FILE } from "../spec/pinout.ts";
import { requirementsSectionRange } from "../spec/requirements.ts";
import type { KicadProject } from "../repo/project.ts";
import { listRepoFolder, readRepoDoc } from "../repo/repo-files.ts";

const SyncItemKindSchema = v.picklist(["bom", "pinout", "stale-ref", "board", "changelog", "coverage", "requirement"]);
export type SyncItemKind = v.InferOutput<typeof SyncItemKindSchema>;

/** How an item gets resolved: by code, by the gated model run, or only by a person. */
const ResolutionSchema = v.picklist(["regenerate", "board_sync", "append", "create", "model", "human"]);
export type Resolution = v.InferOutput<typeof ResolutionSchema>;

export const SyncItemSchema = v.object({
  kind: SyncItemKindSchema,
  /** Repo-relative doc the item is about, when there is one. */
  doc: v.optional(v.string()),
  line: v.optional(v.number()),
  /** What the doc (or board, or rule) claims. */
  claim: v.string(),
  /** What the design actually says. */
  actual: v.string(),
  key: v.string(),
  resolution: ResolutionSchema,
});
export type SyncItem = v.InferOutput<typeof SyncItemSchema>;

/** `sync`'s report: its type, and the `outputSchema` of the MCP tool that returns it. */
export const SyncReportSchema = v.object({
  schema: v.literal("copperhead.sync/1"),
  /** Nothing drifted and no requirement is violated. */
  ok: v.boolean(),
  drift: v.array(SyncItemSchema),
  violations: v.array(SyncItemSchema),
  /**
   * Requirement violations need a person, and so does drift only a person may fix (a stale
   * mention inside a Requirements section): copperhead never resolves either.
   */
  needsHuman: v.boolean(),
});
export type SyncReport = v.InferOutput<typeof SyncReportSchema>;

export interface VerifyInputs {
  project: KicadProject;
  /** Repo-relative docs folder. */
  docs: string;
}

export function verifySync({ project, docs }: VerifyInputs): SyncReport {
  const design = loadDesign(project);
  const drift = [...docDrift(design, docs), ...boardDrift(design), ...recordDrift(design, docs)];
  const violations = requirementViolations(design, docs);
  drift.sort(byKey);
  violations.sort(byKey);
  const needsHuman = violations.length > 0 || !drift.every(resolvable);
  return {
    schema: "copperhead.sync/1",
    ok: drift.length === 0 && violations.length === 0,
    drift,
    violations,
    needsHuman,
  };
}

function docDrift(design: Design, docs: string): SyncItem[] {
  const root = design.project.repoRoot;
  const inRequirements = requirementsLines(root);
  return scanDrift(design, { docsDir: docs }).items.map((item): SyncItem => {
    const stale = item.kind === "stale_ref" || item.kind === "stale_net";
    const pinout = item.kind.startsWith("pinout_");
    const table = item.kind === "bom_table" || item.kind === "pinout_table";
    return {
      kind: stale ? "stale-ref" : pinout ? "pinout" : "bom",
      doc: item.doc,
      ...(item.line ? { line: item.line } : {}),
      claim: table ? `a copperhead ${pinout ? "pinout" : "BOM"} table` : (item.claim ?? "(nothing)"),
      actual: table ? item.message : (item.actual ?? "(nothing)"),
      key: item.key,
      // A stale mention inside a Requirements section is a person's (see requirementsLines). A
      // table without markers is regenerated below the text; one whose markers or rows cannot be
      // parsed cannot be rewritten in place without guessing what the person meant.
      resolution: stale
        ? inRequirements(item.doc, item.line)
          ? "human"
          : "model"
        : table && !generatedTableParses(root, item.doc, pinout ? PINOUT_FILE : BOM_FILE)
          ? "human"
          : "regenerate",
    };
  });
}

function generatedTableParses(root: string, doc: string, file: string): boolean {
  const generated = GENERATED_DOCS.find((g) => g.file === file)!;
  try {
    generated.parse(readRepoDoc(root, doc) ?? "", doc);
    return true;
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "parse_error") return false;
    throw err;
  }
}

/**
 * Whether a doc line lies in that doc's Requirements section. A stale mention there is for a
 * person to fix: the model's doc tool refuses to touch the section, so handing it over would
 * only make every resolve fail.
 */
function requirementsLines(root: string): (doc: string, line: number | undefined) => boolean {
  const ranges = new Map<string, ReturnType<typeof requirementsSectionRange>>();
  return (doc, line) => {
    if (line === undefined) return false;
    if (!ranges.has(doc)) ranges.set(doc, requirementsSectionRange(readRepoDoc(root, doc) ?? ""));
    const range = ranges.get(doc);
    return range !== undefined && line >= range.start && line <= range.end;
  };
}

/** Drift that copperhead may resolve; what is left needs a person, like a violation. */
export function resolvable(item: SyncItem): boolean {
  return item.resolution !== "human";
}

/** The board out of parity with the schematic, as the native parity check sees it. */
function boardDrift(design: Design): SyncItem[] {
  return nativeParity(design).map((f) => ({
    kind: "board",
    doc: f.location?.file,
    claim: "the board matches the schematic",
    actual: f.message,
    key: f.key,
    resolution: "board_sync",
  }));
}

/** Every committed change proposal needs its CHANGELOG entry; DECISIONS and CHANGELOG must exist. */
function recordDrift(design: Design, docs: string): SyncItem[] {
  const root = design.project.repoRoot;
  const items: SyncItem[] = [];
  for (const file of ["DECISIONS.md", "CHANGELOG.md"]) {
    if (!existsSync(join(root, docs, file))) {
      items.push({
        kind: "coverage",
        doc: `${docs}/${file}`,
        claim: `${docs}/${file} exists`,
        actual: "missing",
        key: `sync:coverage:${docs}/${file}`,
        resolution: "create",
      });
    }
  }
  const changelogPath = join(root, docs, "CHANGELOG.md");
  const changelog = readRepoDoc(root, changelogPath) ?? "";
  const changesDir = join(root, docs, "changes");
  const proposals = listRepoFolder(root, changesDir).filter((f) => f.endsWith(".md"));
  for (const file of proposals) {
    const rel = `${docs}/changes/${file}`;
    if (changelog.includes(rel)) continue;
    items.push({
      kind: "changelog",
      doc: `${docs}/CHANGELOG.md`,
      claim: `an entry for ${rel}`,
      actual: "no CHANGELOG entry names it",
      key: `sync:changelog:${rel}`,
      resolution: "append",
    });
  }
  return items;
}

function requirementViolations(design: Design, docs: string): SyncItem[] {
  const evaluation = evaluateRequirements(design, { docsDir: docs });
  if (evaluation.state !== "evaluated") return [];
  return evaluation.outcomes
    .filter((o) => !o.pass)
    .map((o) => ({
      kind: "requirement",
      doc: evaluation.file,
      line: o.rule.span.line,
      claim: `${o.reqId}: ${o.rule.text}`,
      actual: o.actual,
      key: o.key,
      resolution: "human",
    }));
}

function byKey(a: SyncItem, b: SyncItem): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
