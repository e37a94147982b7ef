/**
 * The full check of one repo state: every check family in order, as one report that is a pure
 * function of the files (no timestamps, no absolute paths). `copperhead check` and the gated
 * run's baseline and verification all come through here. No network, no model.
 *
 * A check that could not run is never a pass: a missing kicad-cli, a file kicad-cli cannot
 * load, or a malformed design file throws a typed error (exit 3) instead of a report.
 */
import { join } from "node:path";
import { loadDesign, repoPath } from "../design/design.ts";
import { parseKicadVersion } from "../kicad/cli/kicad-cli.ts";
import { kicadShareDir } from "../kicad/cli/install.ts";
import { projectLibraries, type Libraries } from "../kicad/library/libraries.ts";
import type { KicadProject } from "../repo/project.ts";
import { checkChanges } from "./changes.ts";
import { checkDrc, checkRouting } from "./drc.ts";
import { checkDrift } from "./drift.ts";
import { checkErc } from "./erc.ts";
import { checkFab } from "./fab.ts";
import { indexBoard, indexSchematic } from "./kicad-items.ts";
import { runKicadChecks, type KicadResults } from "./kicad-run.ts";
import { checkParity } from "./parity.ts";
import { evaluateRequirements, requirementsResult } from "./requirements.ts";
import { countSeverities, skippedResult } from "./result.ts";
import { CHECK_IDS, type CheckId, type CheckReport, type CheckResult } from "./types.ts";

/** How to check: the repo's settings (its config) and the command's flags. */
export interface CheckSettings {
  /** Repo-relative docs folder. */
  docs: string;
  /** Warnings fail their family too. */
  strict: boolean;
  /** Also run the fabrication checks; unconnected items become errors. */
  fab?: boolean;
  /** Families switched on or off; absent means on (fab: only with `fab`). */
  checks?: Partial<Record<CheckId, boolean>>;
  /** Where kicad-cli results are cached; default the project's repo's (a snapshot passes its repo's). */
  cacheRepo?: string;
}

/** Families fed by kicad-cli; parity is native (see `parity.ts`). */
const KICAD_FAMILIES: CheckId[] = ["erc", "drc", "routing"];

export async function checkProject(project: KicadProject, settings: CheckSettings): Promise<CheckReport> {
  const { strict } = settings;
  const fab = settings.fab ?? false;
  const enabled = (id: CheckId) => settings.checks?.[id] !== false && (id !== "fab" || fab);
  const docsDir = join(project.repoRoot, settings.docs);

  const design = loadDesign(project);
  const needsKicad = KICAD_FAMILIES.some(enabled) || enabled("fab");
  const kicad = needsKicad
    ? await runKicadChecks(design, {
        erc: enabled("erc"),
        drc: enabled("drc") || enabled("routing"),
        fabExport: enabled("fab"),
        cacheRepo: settings.cacheRepo,
      })
    : undefined;

  const boardItems = design.board && kicad?.drc ? indexBoard(design.board, design.project.board!) : undefined;
  const onBoard = (
    id: CheckId,
    run: (drc: NonNullable<KicadResults["drc"]>, items: NonNullable<typeof boardItems>) => CheckResult,
  ) => (boardItems && kicad?.drc ? run(kicad.drc, boardItems) : skippedResult(id, "the project has no board"));
  const requirements = evaluateRequirements(design, { docsDir });
  const requirementIds =
    requirements.state === "evaluated" ? new Set(requirements.spec.requirements.map((r) => r.id)) : undefined;
  const families: Record<CheckId, () => CheckResult> = {
    erc: () => checkErc(kicad!.erc!, design, indexSchematic(design), strict),
    drc: () => onBoard("drc", (drc, items) => checkDrc(drc.report, design, items, strict)),
    parity: () => (design.board ? checkParity(design, strict) : skippedResult("parity", "the project has no board")),
    routing: () => onBoard("routing", (drc, items) => checkRouting(drc.report, design, items, fab || strict)),
    drift: () => checkDrift(design, { docsDir }),
    requirements: () => requirementsResult(requirements),
    changes: () => checkChanges(design, { docsDir, requirementIds }),
    fab: () => checkFab(design, kicad?.fabExport, librariesOf(project, kicad)),
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
function librariesOf(project: KicadProject, kicad: KicadResults | undefined): Libraries {
  const version = kicad && parseKicadVersion(kicad.version);
  return projectLibraries(project.projectFile, version ? { version, shareDir: kicadShareDir() } : undefined);
}

function skipReason(id: CheckId): string {
  return id === "fab" ? "run with --fab to check fabrication readiness" : "disabled in .copperhead/config.json";
}
