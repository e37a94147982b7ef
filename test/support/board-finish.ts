/**
 * The acceptance checks of a part added by `do` to a real board: a scripted session run in a
 * repo copy through the compiled binary, judged by raw `kicad-cli pcb drc` against the commit
 * before it, and the final board with every zone refilled by KiCad.
 */
import { expect } from "bun:test";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { boardBounds } from "../../src/kicad/board/footprint/instance.ts";
import { Board, type BBox } from "../../src/kicad/board/view.ts";
import { fillWithKicad } from "../../src/kicad/board/zones/refill.ts";
import { boardZones } from "../../src/kicad/board/zones/zones.ts";
import { runDrc, type DrcReport, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { runBinary } from "../e2e/binary.ts";
import { git } from "../repo/git-repo.ts";
import { copperItems, declaredNets, withoutAdditions } from "./board-zones.ts";
import { insideOutline } from "./board-outline.ts";
import { makeTempDir } from "./kicad.ts";
import { ISOLATED_ENV } from "./repos.ts";

/** Generous: vme-wren's raw DRC alone takes minutes on a loaded machine. */
const DRC_TIMEOUT = 900_000;

/** A scripted session and what it adds: each new part with the part it was placed next to. */
export interface FinishSession {
  request: string;
  turns: unknown[];
  added: { ref: string; anchor: string }[];
}

/** Error violations and unconnected items, by type and the items they name (coordinates left out). */
export function drcKeys(report: DrcReport): { errors: string[]; unconnected: string[] } {
  const key = (v: DrcReport["violations"][number]) => `${v.type}: ${v.items.map((i) => i.description.replace(/,\s*(length|width)\s+[^,]*/g, "")).sort().join(" | ")}`;
  return {
    errors: report.violations.filter((v) => v.severity === "error" && !v.excluded).map(key).sort(),
    unconnected: report.unconnected_items.filter((v) => !v.excluded).map(key).sort(),
  };
}

/** The keys of `after` not in `before`, counting repeats. */
export function addedKeys(after: string[], before: string[]): string[] {
  const left = [...before];
  return after.filter((k) => {
    const i = left.indexOf(k);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

/** The gap between two boxes, mm (0 when they overlap). */
function gap(a: BBox, b: BBox): number {
  return Math.hypot(Math.max(0, a.minX - b.maxX, b.minX - a.maxX), Math.max(0, a.minY - b.maxY, b.minY - a.maxY));
}

export interface SessionResult {
  layoutPending: { ref: string; reason: string }[];
  verification: string;
  seconds: number;
}

/**
 * Runs `session` through `do` on `repo` and checks its commit against `base` (the board's bytes
 * and raw DRC before it). Returns what the run left for layout, for the caller to judge.
 */
export async function runAndCheck(cli: KicadCli, repo: string, projectFile: string, session: FinishSession, base: { bytes: Buffer; drc: ReturnType<typeof drcKeys> }) {
  const boardFile = discoverProject(repo, projectFile).board!;
  const sessionFile = join(await makeTempDir(), "session.json");
  writeFileSync(sessionFile, JSON.stringify({ schema: "copperhead.session/1", model: "scripted", description: session.request, turns: session.turns }));
  const started = performance.now();
  const run = await runBinary(["do", session.request, "--model", `replay:${sessionFile}`, "--json", "--repo", repo, "--project", projectFile], { env: ISOLATED_ENV });
  const seconds = (performance.now() - started) / 1000;
  expect(run.exitCode, `${session.request}\n${run.stdout}\n${run.stderr}`).toBe(0);
  const summary = JSON.parse(run.stdout);
  expect(summary.status, JSON.stringify(summary)).toBe("committed");
  const after = readFileSync(boardFile);
  const message = await git(repo, "log", "-1", "--format=%B");
  const refs = session.added.map((a) => a.ref);

  // Raw DRC on the committed board: nothing new, or what is new is listed with its reason.
  const drc = drcKeys((await runDrc(boardFile, { cli, timeoutMs: DRC_TIMEOUT })).report);
  expect(addedKeys(drc.errors, base.drc.errors)).toEqual([]);
  const unrouted = addedKeys(drc.unconnected, base.drc.unconnected);
  const pending: { ref: string; reason: string }[] = summary.layoutPending;
  if (pending.length === 0) {
    expect(unrouted).toEqual([]);
    expect(message).not.toContain("left for layout");
  } else {
    for (const p of pending) expect(refs).toContain(p.ref);
    expect(unrouted.every((k) => pending.some((p) => k.includes(`of ${p.ref}`)))).toBe(true);
    expect(message).toMatch(new RegExp(`Verification: .*routing: ${unrouted.length} connections? left for layout \\(`));
    expect(message).not.toMatch(/Verification: .*DRC clean/);
  }

  // The footprints: inside the outline, each within 15 mm of its anchor.
  const board = Board.parse(after);
  const at = (ref: string) => boardBounds(board.footprints().find((f) => f.ref === ref)!.node)!;
  for (const { ref, anchor } of session.added) {
    expect(insideOutline(board, at(ref)), `${ref} inside the outline`).toBe(true);
    expect(gap(at(ref), at(anchor)), `${ref} to ${anchor}, mm`).toBeLessThanOrEqual(15);
  }

  // Every byte outside the new footprints, the new tracks and vias and the fills is the base's; the version too.
  const newNets = addedKeys(declaredNets(after), declaredNets(base.bytes));
  expect(withoutAdditions(after, refs, copperItems(base.bytes), newNets)).toBe(withoutAdditions(base.bytes));
  expect(board.version).toBe(Board.parse(base.bytes).version);
  return { bytes: after, drc, board, boardFile, result: { layoutPending: pending, verification: message.match(/Verification: .*/)?.[0] ?? "", seconds } };
}

/** Raw DRC of `board` with every zone refilled by KiCad's filler. */
async function refilledDrc(cli: KicadCli, board: Board, boardFile: string) {
  const refilled = join(await makeTempDir(), basename(boardFile));
  for (const ext of [".kicad_pro", ".kicad_dru"]) {
    const beside = boardFile.replace(/\.kicad_pcb$/, ext);
    if (existsSync(beside)) copyFileSync(beside, refilled.replace(/\.kicad_pcb$/, ext));
  }
  await fillWithKicad(board, boardFile, boardZones(board.root).filter((z) => z.filled && !z.ruleArea).map((z) => z.id), refilled);
  return drcKeys((await runDrc(refilled, { cli, timeoutMs: DRC_TIMEOUT })).report);
}

/**
 * A refill of every zone by KiCad's filler: raw DRC sees nothing the committed fills did not,
 * but for what a refill of the untouched base shows too (a board whose fills an older KiCad
 * saved: KiCad 9 refills some thermal reliefs differently all over it).
 */
export async function checkRefillChangesNothing(cli: KicadCli, board: Board, boardFile: string, drc: ReturnType<typeof drcKeys>, base: Buffer) {
  const again = await refilledDrc(cli, board, boardFile);
  let errors = addedKeys(again.errors, drc.errors);
  let unconnected = addedKeys(again.unconnected, drc.unconnected);
  if (errors.length + unconnected.length > 0) {
    const stale = await refilledDrc(cli, Board.parse(base), boardFile);
    errors = addedKeys(errors, stale.errors);
    unconnected = addedKeys(unconnected, stale.unconnected);
  }
  expect(errors).toEqual([]);
  expect(unconnected).toEqual([]);
}
