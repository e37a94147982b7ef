/**
 * A part added by `do` to the built-in board arrives finished: placed, routed with the board's
 * rules and verified by KiCad's own DRC, through the compiled binary with a recorded session
 * ("add a 100 nF capacitor next to U1"). The checks are the corpus acceptance's
 * (support/board-finish.ts, run over every corpus and demo board by board-finish-*.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Board } from "../../src/kicad/board/model.ts";
import { runDrc, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { git } from "../repo/git-repo.ts";
import { addedKeys, checkRefillChangesNothing, drcKeys, runAndCheck } from "../support/board-finish.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { copyRepo, initialisedRepo, ISOLATED_ENV } from "../support/repos.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { SESSIONS_DIR, sessionTurns } from "./scripted-model.ts";

let cli: KicadCli;
beforeAll(async () => {
  requireBinary();
  cli = await requireKicadCli();
}, 120_000);
afterAll(cleanupTempDirs);

describe("do: an added part arrives placed, routed and refilled", () => {
  test("fixtures/usb-led", async () => {
    const repo = await copyRepo(await initialisedRepo());
    const project = discoverProject(repo);
    const boardFile = project.board!;
    const bytes = readFileSync(boardFile);
    const drc = drcKeys((await runDrc(boardFile, { cli })).report);
    const session = {
      request: "add a 100 nF capacitor next to U1",
      turns: sessionTurns("add-cap-next-to-u1"),
      added: [{ ref: "C900", anchor: "U1" }],
    };
    const done = await runAndCheck(cli, repo, "usb-led.kicad_pro", session, { bytes, drc });
    expect(done.result.layoutPending).toEqual([]);
    await checkRefillChangesNothing(cli, done.board, done.boardFile, done.drc, bytes);
  }, 300_000);
});

/** A footprint without pads whose courtyard covers the whole outline on both sides: the board has no room left. */
function fillWithCourtyards(boardFile: string): void {
  const text = readFileSync(boardFile, "utf8");
  const { minX, minY, maxX, maxY } = Board.parse(text).edgeCutsBBox()!;
  const rect = (layer: string, id: number) =>
    `(fp_rect (start ${minX} ${minY}) (end ${maxX} ${maxY}) (stroke (width 0.05) (type solid)) (fill no) (layer "${layer}") (uuid "30000000-0000-4000-8000-00000000000${id}"))`;
  const block = `\t(footprint "Test:Block" (layer "F.Cu") (uuid "00000000-0000-4000-8000-000000000001") (at 0 0)
\t\t(property "Reference" "BLK1" (at ${minX} ${minY} 0) (layer "F.Fab") (uuid "10000000-0000-4000-8000-000000000001") (effects (font (size 1 1) (thickness 0.15))))
\t\t(property "Value" "block" (at ${minX} ${minY} 0) (layer "F.Fab") (uuid "20000000-0000-4000-8000-000000000001") (effects (font (size 1 1) (thickness 0.15))))
\t\t(attr board_only exclude_from_pos_files exclude_from_bom)
\t\t${rect("F.CrtYd", 1)}
\t\t${rect("B.CrtYd", 2)}
\t)
`;
  const at = text.indexOf("\t(footprint ");
  writeFileSync(boardFile, text.slice(0, at) + block + text.slice(at));
}

describe("do on a board with no room", () => {
  test("the part is staged, listed with what blocked it, and the Verification line says so as raw DRC does", async () => {
    const repo = await copyRepo(await initialisedRepo());
    const boardFile = discoverProject(repo).board!;
    fillWithCourtyards(boardFile);
    await git(repo, "commit", "--quiet", "-am", "no room left");
    const bytes = readFileSync(boardFile);
    const drc = drcKeys((await runDrc(boardFile, { cli })).report);
    const run = await runBinary(
      [
        "do",
        "add a 100 nF capacitor next to U1",
        "--model",
        `replay:${join(SESSIONS_DIR, "add-cap-next-to-u1.json")}`,
        "--json",
        "--repo",
        repo,
      ],
      { env: ISOLATED_ENV },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.status).toBe("committed");
    expect(summary.layoutPending).toEqual([
      {
        ref: "C900",
        reason: expect.stringMatching(
          /^staged below the outline: no free spot within 15 mm of U1 or elsewhere on the board: the courtyard of BLK1 \(courtyard\)/,
        ),
      },
    ]);
    const message = await git(repo, "log", "-1", "--format=%B");
    expect(message).toMatch(
      /Verification: .*routing: 2 connections left for layout \(C900: staged below the outline: .*the courtyard of BLK1/,
    );
    expect(message).not.toMatch(/Verification: .*DRC clean/);
    // Raw DRC agrees: no new error, and the two new unconnected items are C900's.
    const after = drcKeys((await runDrc(boardFile, { cli })).report);
    expect(addedKeys(after.errors, drc.errors)).toEqual([]);
    const unconnected = addedKeys(after.unconnected, drc.unconnected);
    expect(unconnected).toHaveLength(2);
    expect(unconnected.every((k) => k.includes("of C900"))).toBe(true);
    expect(
      Board.parse(readFileSync(boardFile))
        .footprints()
        .find((f) => f.ref === "C900")!.at.y,
    ).toBeGreaterThan(Board.parse(bytes).edgeCutsBBox()!.maxY);
  }, 300_000);
});
