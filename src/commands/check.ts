/**
 * `copperhead check`: the deterministic gate (DESIGN §4). It runs every check family in order
 * and returns a report that is a pure function of the repo state. No network, no model.
 *
 * A check that could not run is never a pass: a missing kicad-cli, a file kicad-cli cannot
 * load, or a malformed design file throws a typed error (exit 3) instead of a report.
 */
import { openRepo } from "../repo/recovery.ts";
import { dirname, join } from "node:path";
import { checkChanges } from "../checks/changes.ts";
import { loadDesign, repoPath } from "../checks/design.ts";
import { checkDrc, checkRouting } from "../checks/drc.ts";
import { checkDrift } from "../checks/drift.ts";
import { checkErc } from "../checks/erc.ts";
import { checkFab } from "../checks/fab.ts";
import { indexBoard, indexSchematic } from "../checks/kicad-items.ts";
import { runKicadChecks, type KicadResults } from "../checks/kicad-run.ts";
import { checkParity } from "../checks/parity.ts";
import { evaluateRequirements, requirementsResult } from "../checks/requirements.ts";
import { countSeverities, skippedResult } from "../checks/result.ts";
import { CHECK_IDS, type CheckId, type CheckReport, type CheckResult } from "../checks/types.ts";
import { discoverConfiguredProject } from "../config/config.ts";
import { parseKicadVersion } from "../kicad/kicad-cli.ts";
import { kicadShareDir } from "../kicad/kicad-install.ts";
import { Libraries } from "../kicad/library.ts";
import type { KicadProject } from "../repo/project.ts";

export interface CheckOptions {
  repo?: string;
  project?: string;
  /** Also run the fabrication checks; unconnected items become errors. */
  fab?: boolean;
  /** Warnings fail their family too. Default: the config's `strict`. */
  strict?: boolean;
}

const KICAD_FAMILIES: CheckId[] = ["erc", "drc", "parity", "routing"];

export async function runCheck(options: CheckOptions = {}): Promise<CheckReport> {
  const repoRoot = await openRepo(options.repo);
  const { config, project } = discoverConfiguredProject(repoRoot, options.project);
  const strict = options.strict ?? config.strict;
  const fab = options.fab ?? false;
  const enabled = (id: CheckId) => config.checks?.[id] !== false && (id !== "fab" || fab);
  const docsDir = join(repoRoot, config.docs);

  const design = loadDesign(project);
  const needsKicad = KICAD_FAMILIES.some(enabled) || enabled("fab");
  const kicad = needsKicad
    ? await runKicadChecks(design, {
        erc: enabled("erc"),
        drc: ["drc", "parity", "routing"].some((id) => enabled(id as CheckId)),
        fabExport: enabled("fab"),
      })
    : undefined;

  const boardItems = design.board && kicad?.drc ? indexBoard(design.board, design.project.board!) : undefined;
  const onBoard = (id: CheckId, run: (drc: NonNullable<KicadResults["drc"]>, items: NonNullable<typeof boardItems>) => CheckResult) =>
    boardItems && kicad?.drc ? run(kicad.drc, boardItems) : skippedResult(id, "the project has no board");
  const requirements = evaluateRequirements(design, { docsDir });
  const requirementIds = requirements.state === "evaluated" ? new Set(requirements.spec.requirements.map((r) => r.id)) : undefined;
  const families: Record<CheckId, () => CheckResult> = {
    erc: () => checkErc(kicad!.erc!, design, indexSchematic(design), strict),
    drc: () => onBoard("drc", (drc, items) => checkDrc(drc.report, design, items, strict)),
    parity: () =>
      onBoard("parity", (drc, items) => checkParity(design, { violations: drc.report.schematic_parity, checked: drc.parityChecked }, items)),
    routing: () => onBoard("routing", (drc, items) => checkRouting(drc.report, design, items, fab || strict)),
    drift: () => checkDrift(design, { docsDir }),
    requirements: () => requirementsResult(requirements),
    changes: () => checkChanges(design, { docsDir, requirementIds }),
    fab: () => checkFab(design, kicad?.fabExport, projectLibraries(project, kicad)),
  };
  const checks = CHECK_IDS.map((id) => (enabled(id) ? families[id]() : skippedResult(id, skipReason(id))));
  const all = checks.flatMap((c) => c.findings);
  return {
    schema: "copperhead.check/1",
    ok: checks.every((c) => c.status !== "fail"),
    project: repoPath(design, project.projectFile),
    kicad: kicad ? { version: kicad.version } : null,
    strict,
    fab,
    checks,
    counts: countSeverities(all),
  };
}

/** The project's libraries, located without starting kicad-cli (its version is in the results). */
function projectLibraries(project: KicadProject, kicad: KicadResults | undefined): Libraries {
  const major = (kicad && parseKicadVersion(kicad.version)?.major) ?? 9;
  return new Libraries({ projectDir: dirname(project.projectFile), major, shareDir: kicadShareDir() });
}

function skipReason(id: CheckId): string {
  return id === "fab" ? "run with --fab to check fabrication readiness" : "disabled in .copperhead/config.json";
}
