/**
 * A part added by `do` arrives finished: placed, routed with the board's rules, its zones
 * refilled by KiCad, and verified by KiCad's own DRC. Through the compiled binary with a
 * recorded session ("add a 100 nF capacitor next to U1"), real kicad-cli and KiCad's Python,
 * on the built-in board and on a corpus board with pours: the run commits; raw `kicad-cli pcb
 * drc` on the committed board finds no new error and no new unconnected item (one is allowed
 * only when the run lists the part in layoutPending with its reason, and then the Verification
 * line says so); the new footprint is inside the outline, its courtyard within 15 mm of U1's; a refill of every
 * zone by KiCad changes nothing DRC sees; every byte outside the new footprint, the new tracks
 * and vias and the refilled fills is unchanged; the file keeps its version.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fillWithKicad } from "../../src/kicad/board/zones/refill.ts";
import { boardZones } from "../../src/kicad/board/zones/zones.ts";
import { boardBounds } from "../../src/kicad/board/footprint/instance.ts";
import { Board } from "../../src/kicad/board/view.ts";
import { runDrc, type DrcReport, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { git } from "../repo/git-repo.ts";
import { copperItems, withoutAdditions } from "../support/board-zones.ts";
import { insideOutline } from "../support/board-outline.ts";
import { corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { copyRepo, initialisedCorpusRepo, initialisedRepo, ISOLATED_ENV } from "../support/repos.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

let cli: KicadCli;
beforeAll(async () => {
  requireBinary();
  cli = await requireKicadCli();
}, 120_000);
afterAll(cleanupTempDirs);

const SESSION = `replay:${join(SESSIONS_DIR, "add-cap-next-to-u1.json")}`;
const REQUEST = "add a 100 nF capacitor next to U1";
const ADDED = "C900";

const CASES: { id: string; repo: () => Promise<string> }[] = [
  { id: "fixtures/usb-led", repo: async () => copyRepo(await initialisedRepo()) },
  { id: "corpus/glasgow-revc3 (KiCad 8, pours on four layers)", repo: () => initialisedCorpusRepo(corpusProjects().find((p) => p.id === "corpus/glasgow-revc3")!) },
];

/** Error violations and unconnected items, by type and the items they name (coordinates left out). */
function drcKeys(report: DrcReport): { errors: string[]; unconnected: string[] } {
  const key = (v: DrcReport["violations"][number]) => `${v.type}: ${v.items.map((i) => i.description.replace(/,\s*(length|width)\s+[^,]*/g, "")).sort().join(" | ")}`;
  return {
    errors: report.violations.filter((v) => v.severity === "error" && !v.excluded).map(key).sort(),
    unconnected: report.unconnected_items.filter((v) => !v.excluded).map(key).sort(),
  };
}

function added(after: string[], before: string[]): string[] {
  const left = [...before];
  return after.filter((k) => {
    const i = left.indexOf(k);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

describe("do: an added part arrives placed, routed and refilled", () => {
  for (const c of CASES) {
    test(
      c.id,
      async () => {
        const repo = await c.repo();
        const project = discoverProject(repo);
        const boardFile = project.board!;
        const base = readFileSync(boardFile);
        const drcBase = drcKeys((await runDrc(boardFile, { cli, timeoutMs: 900_000 })).report);

        const run = await runBinary(["do", REQUEST, "--model", SESSION, "--json", "--repo", repo], { env: ISOLATED_ENV });
        expect(run.exitCode, run.stderr).toBe(0);
        const summary = JSON.parse(run.stdout);
        expect(summary.status).toBe("committed");
        const after = readFileSync(boardFile);
        const message = await git(repo, "log", "-1", "--format=%B");

        // Raw DRC on the committed board: nothing new, or what is new is listed with its reason.
        const drcAfter = drcKeys((await runDrc(boardFile, { cli, timeoutMs: 900_000 })).report);
        expect(added(drcAfter.errors, drcBase.errors)).toEqual([]);
        const unrouted = added(drcAfter.unconnected, drcBase.unconnected);
        if (summary.layoutPending.length === 0) {
          expect(unrouted).toEqual([]);
          expect(message).not.toContain("left for layout");
        } else {
          expect(summary.layoutPending.map((p: { ref: string }) => p.ref)).toEqual([ADDED]);
          expect(unrouted.every((k) => k.includes(`of ${ADDED}`))).toBe(true);
          expect(message).toMatch(new RegExp(`Verification: .*routing: ${unrouted.length} connections? left for layout \\(${ADDED}: `));
          expect(message).not.toMatch(/Verification: .*DRC clean/);
        }

        // The footprint: inside the outline, its courtyard within 15 mm of U1's.
        const board = Board.parse(after);
        const footprint = board.footprints().find((f) => f.ref === ADDED)!;
        const u1 = board.footprints().find((f) => f.ref === "U1")!;
        expect(insideOutline(board, boardBounds(footprint.node)!)).toBe(true);
        const [a, b] = [boardBounds(footprint.node)!, boardBounds(u1.node)!];
        expect(Math.hypot(Math.max(0, a.minX - b.maxX, b.minX - a.maxX), Math.max(0, a.minY - b.maxY, b.minY - a.maxY))).toBeLessThanOrEqual(15);

        // Every byte outside the new footprint, the new tracks and vias and the fills is the base's; the version too.
        expect(withoutAdditions(after, [ADDED], copperItems(base))).toBe(withoutAdditions(base));
        expect(board.version).toBe(Board.parse(base).version);

        // The committed fills are KiCad's: refilling every zone changes nothing DRC sees.
        const refilled = join(await makeTempDir(), "refilled.kicad_pcb");
        await fillWithKicad(board, boardFile, boardZones(board.root).filter((z) => z.filled && !z.ruleArea).map((z) => z.id), refilled);
        const drcRefilled = drcKeys((await runDrc(refilled, { cli, timeoutMs: 900_000 })).report);
        expect(added(drcRefilled.errors, drcAfter.errors)).toEqual([]);
        expect(added(drcRefilled.unconnected, drcAfter.unconnected)).toEqual([]);
        console.log(`${c.id}: layoutPending ${JSON.stringify(summary.layoutPending)}; ${message.match(/Verification: .*/)?.[0]}`);
      },
      600_000,
    );
  }
});
