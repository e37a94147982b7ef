/**
 * Baseline: the check of the design before the run, taken on a snapshot of HEAD. The run
 * starts from a clean tree, so HEAD is exactly the design before the run; checking a copy of it
 * lets the model propose and edit the real tree meanwhile, and the gate awaits the baseline only
 * when it needs it — with a real model the baseline costs no wall time at all. Check results
 * are cached by content, so the snapshot shares the repo's cache in both directions.
 */
import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compareWithBaseline } from "../checks/baseline.ts";
import { checkProject } from "../checks/check.ts";
import { CHECK_IDS, type CheckReport, type Finding } from "../checks/types.ts";
import { Board } from "../kicad/board/model.ts";
import { refillZones } from "../kicad/board/zones/refill.ts";
import { boardZones } from "../kicad/board/zones/zones.ts";
import { printSexpr } from "../kicad/sexpr/index.ts";
import { discoverConfiguredProject } from "../config/config.ts";
import type { KicadProject } from "../repo/project.ts";
import { repoRelative } from "../repo/repo-path.ts";
import { withSnapshot } from "../repo/snapshot.ts";
import { renderCommitted } from "./renders.ts";
import { renderDir, type Baseline, type RunState } from "./run-state.ts";

/** Starts the baseline check and the "before" plots, both alongside the model. */
export function startBaseline(run: RunState): void {
  const { project, config } = run.options;
  run.progress({
    type: "phase",
    phase: "baseline",
    message: "checking the design before any change (alongside the model)",
  });
  const baseline: Baseline = { report: checkCommitted(project, config.strict) };
  // A baseline that cannot run (kicad-cli cannot load HEAD's files) stops the model at once;
  // the run then rolls back and reports that error, as a check would have.
  baseline.report.catch((err) => {
    baseline.failure = err;
    run.stop.abort();
  });
  run.baseline = baseline;
  // run_check marks each finding new or unchanged against it, as the gate and the records do.
  run.ctx.baseline = () => judgedBaseline(baseline);
  // Plotted while the model proposes and edits, which leaves a core idle (see renders.ts).
  run.renders.before = renderCommitted(project, join(renderDir(run), "before"), run.cli);
}

/** The full check of HEAD, on a snapshot of it. */
export async function checkCommitted(project: KicadProject, strict: boolean): Promise<CheckReport> {
  const root = project.repoRoot;
  return withSnapshot(root, "HEAD", async (snapshot) => {
    // The snapshot's own config: HEAD's, which the clean tree the run started from shares.
    const committed = discoverConfiguredProject(realpathSync(snapshot.root), repoRelative(root, project.projectFile));
    return checkProject(committed.project, { ...committed.config, strict, cacheRepo: root });
  });
}

/**
 * HEAD's DRC with every pour refilled by KiCad's own filler, on a snapshot. A board last filled
 * by an older KiCad gets the current filler's fill wherever a run refills it, and that filler
 * can leave a pad with fewer thermal spokes than its zone asks, or an island, on the untouched
 * board as well: antenna-eval's SMA connectors keep two spokes in the saved fill and one in
 * KiCad 9's, so any edit near one shows a "new" starved thermal. Such a finding is the
 * filler's, not the change's. Costs a whole-board fill and a DRC, so the gate asks for it only
 * when it would fail on a finding about a zone (`aboutZone`).
 */
export async function checkCommittedRefilled(project: KicadProject, strict: boolean): Promise<CheckReport> {
  const root = project.repoRoot;
  return withSnapshot(root, "HEAD", async (snapshot) => {
    const committed = discoverConfiguredProject(realpathSync(snapshot.root), repoRelative(root, project.projectFile));
    const file = committed.project.board;
    if (file) {
      const board = Board.load(file);
      await refillZones(
        board,
        file,
        boardZones(board.root).filter((z) => z.filled && !z.ruleArea),
      );
      writeFileSync(file, printSexpr(board.doc));
    }
    return checkProject(committed.project, {
      ...committed.config,
      strict,
      cacheRepo: root,
      checks: Object.fromEntries(CHECK_IDS.map((id) => [id, id === "drc" || id === "routing"])),
    });
  });
}

/**
 * What a run's findings are judged new against, by the gate, the records' Verification line
 * and run_check alike: HEAD's check, with what HEAD refilled by KiCad shows beyond it once the
 * gate has asked for that (`withRefilledFindings`).
 */
export async function judgedBaseline(baseline: Baseline): Promise<CheckReport> {
  const report = await baseline.report;
  return baseline.refilled ? withRefilledFindings(report, await baseline.refilled) : report;
}

/** Whether a finding is about a pour: KiCad names a zone among its items ("Zone [GND]", "Zone 'GND' [GND]"). */
export function aboutZone(f: Finding): boolean {
  return f.check === "drc" && /\bZone (?:'[^']*' )?\[/.test(f.message);
}

/**
 * `baseline` with the DRC and routing findings `refilled` (`checkCommittedRefilled`) has beyond
 * its own. A finding both fills show joins once: counted twice, a family the run grew would
 * look as large as the baseline's and its surplus would not be new.
 */
export function withRefilledFindings(baseline: CheckReport, refilled: CheckReport): CheckReport {
  const beyond = new Set(
    compareWithBaseline(baseline, refilled, false)
      .current.filter((f) => f.baselineState === "new")
      .map((f) => f.key),
  );
  const extra = new Map(refilled.checks.map((c) => [c.id, c.findings.filter((f) => beyond.has(f.key))]));
  return {
    ...baseline,
    checks: baseline.checks.map((c) =>
      c.id === "drc" || c.id === "routing" ? { ...c, findings: [...c.findings, ...(extra.get(c.id) ?? [])] } : c,
    ),
  };
}
