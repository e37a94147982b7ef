/**
 * The verify phase of `copperhead sync` (DESIGN §6): does everything that describes the design
 * still agree with it? Writes nothing, needs no key and no network. Drift is what copperhead
 * may resolve; requirement violations are reported for a human and never touched.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadDesign, type Design } from "../checks/design.ts";
import { scanDrift } from "../checks/drift.ts";
import { nativeParity } from "../checks/parity.ts";
import { evaluateRequirements } from "../checks/requirements.ts";
import type { KicadProject } from "../repo/project.ts";

export type SyncItemKind = "bom" | "stale-ref" | "board" | "changelog" | "coverage" | "requirement";

/** How an item gets resolved: by code, by the gated model run, or only by a person. */
export type Resolution = "regenerate" | "board_sync" | "append" | "create" | "model" | "human";

export interface SyncItem {
  kind: SyncItemKind;
  /** Repo-relative doc the item is about, when there is one. */
  doc?: string;
  line?: number;
  /** What the doc (or board, or rule) claims. */
  claim: string;
  /** What the design actually says. */
  actual: string;
  key: string;
  resolution: Resolution;
}

export interface SyncReport {
  schema: "copperhead.sync/1";
  /** Nothing drifted and no requirement is violated. */
  ok: boolean;
  drift: SyncItem[];
  violations: SyncItem[];
  /** Requirement violations need a person: copperhead never resolves them. */
  needsHuman: boolean;
}

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
  return { schema: "copperhead.sync/1", ok: drift.length === 0 && violations.length === 0, drift, violations, needsHuman: violations.length > 0 };
}

function docDrift(design: Design, docs: string): SyncItem[] {
  return scanDrift(design, { docsDir: docs }).items.map((item) => {
    const stale = item.kind === "stale_ref" || item.kind === "stale_net";
    return {
      kind: stale ? "stale-ref" : "bom",
      doc: item.doc,
      ...(item.line ? { line: item.line } : {}),
      claim: item.claim ?? "(nothing)",
      actual: item.actual ?? "(nothing)",
      key: item.key,
      resolution: stale ? "model" : "regenerate",
    };
  });
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
      items.push({ kind: "coverage", doc: `${docs}/${file}`, claim: `${docs}/${file} exists`, actual: "missing", key: `sync:coverage:${docs}/${file}`, resolution: "create" });
    }
  }
  const changelogPath = join(root, docs, "CHANGELOG.md");
  const changelog = existsSync(changelogPath) ? readFileSync(changelogPath, "utf8") : "";
  const changesDir = join(root, docs, "changes");
  const proposals = existsSync(changesDir) ? readdirSync(changesDir).filter((f) => f.endsWith(".md")).sort() : [];
  for (const file of proposals) {
    const rel = `${docs}/changes/${file}`;
    if (changelog.includes(rel)) continue;
    items.push({ kind: "changelog", doc: `${docs}/CHANGELOG.md`, claim: `an entry for ${rel}`, actual: "no CHANGELOG entry names it", key: `sync:changelog:${rel}`, resolution: "append" });
  }
  return items;
}

function requirementViolations(design: Design, docs: string): SyncItem[] {
  const evaluation = evaluateRequirements(design, { docsDir: docs });
  if (evaluation.state !== "evaluated") return [];
  return evaluation.outcomes
    .filter((o) => !o.pass)
    .map((o) => ({ kind: "requirement", doc: evaluation.file, claim: `${o.reqId}: ${o.rule.text}`, actual: o.actual, key: o.key, resolution: "human" }));
}

function byKey(a: SyncItem, b: SyncItem): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}
