/**
 * "Add a 100 nF capacitor next to U1" through the compiled binary on the built-in board and on
 * corpus projects (copied to a temp git repo, `init` first), with a recorded model session:
 * the run commits, the symbol is on U1's sheet within 15 mm of U1, overlaps nothing that was
 * drawn (boxes computed from the committed tree), its power symbols stand upright with the
 * supply pin up, and its footprint is inside the outline, clear of every other courtyard.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Board } from "../../src/kicad/board/model.ts";
import { listComponents } from "../../src/kicad/netlist/components.ts";
import { boardBounds } from "../../src/kicad/board/footprint/instance.ts";
import { placePoint } from "../../src/kicad/schematic/geometry.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { unitPins } from "../../src/kicad/schematic/model/symbols.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { git } from "../repo/git-repo.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { insideOutline } from "../support/board-outline.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { copyRepo, initialisedRepo, ISOLATED_ENV } from "../support/repos.ts";
import { drawnItems, gap, overlaps } from "../support/sheet-boxes.ts";
import { requireBinary, runBinary } from "./binary.ts";
import { SESSIONS_DIR } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const SESSION = `replay:${join(SESSIONS_DIR, "add-cap-next-to-u1.json")}`;
const REQUEST = "add a 100 nF capacitor next to U1";
const TIMEOUT = 600_000;

let usbLed = "";
beforeAll(async () => {
  requireBinary();
  await requireKicadCli();
  usbLed = await initialisedRepo();
}, 120_000);

/** A corpus project in a fresh git repo, committed, then `copperhead init` committed. */
async function corpusRepo(id: string): Promise<string> {
  const project = corpusProjects().find((p) => p.id === id);
  if (!project) throw new Error(`corpus project ${id} is missing`);
  const repo = (await copyCorpusProject(project)).root;
  await git(repo, "init", "--quiet", "--initial-branch=main");
  await git(repo, "config", "user.name", "Test User");
  await git(repo, "config", "user.email", "test@example.com");
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", "design");
  const init = await runBinary(["init", "--no-hooks", "--repo", repo], { env: ISOLATED_ENV });
  expect(init.exitCode, init.stderr).toBe(0);
  await git(repo, "add", "-A");
  await git(repo, "commit", "--quiet", "-m", "copperhead init");
  return repo;
}

const CASES: { id: string; repo: () => Promise<string> }[] = [
  { id: "fixtures/usb-led", repo: () => copyRepo(usbLed) },
  { id: "corpus/glasgow-revc3", repo: () => corpusRepo("corpus/glasgow-revc3") },
];

describe("do: add a 100 nF capacitor next to U1", () => {
  for (const c of CASES) {
    test(
      c.id,
      async () => {
        const repo = await c.repo();
        const before = listComponents(loadSchematicProject(findRoot(repo)));
        const u1 = before.find((x) => x.ref === "U1")!;
        const oldItems = new Set(drawnItems(u1.file).map((i) => i.uuid));
        const oldFootprints = Board.load(findBoard(repo))
          .footprints()
          .map((f) => f.ref);

        const { exitCode, stdout, stderr } = await runBinary(
          ["do", REQUEST, "--model", SESSION, "--json", "--repo", repo],
          { env: ISOLATED_ENV },
        );
        expect(exitCode, stderr).toBe(0);
        const summary = JSON.parse(stdout);
        expect(summary.status).toBe("committed");
        // What the run left unrouted is listed with its reason, and the Verification line says so.
        for (const pending of summary.layoutPending)
          expect(pending).toEqual({ ref: "C900", reason: expect.any(String) });
        if (summary.layoutPending.length > 0)
          expect(summary.verificationLine).toMatch(/routing: \d+ connections? left for layout \(C900: /);

        // The schematic: on U1's sheet, next to it, over nothing, power symbols upright.
        const project = loadSchematicProject(findRoot(repo));
        const cap = listComponents(project).find((x) => x.ref === "C900")!;
        expect(cap.sheet).toBe(u1.sheet);
        const items = drawnItems(u1.file, u1.sheetPath);
        const fresh = items.filter((i) => !oldItems.has(i.uuid));
        const old = items.filter((i) => oldItems.has(i.uuid));
        const capBox = fresh.find((i) => i.symbol?.reference === "C900")!.box;
        const near = Math.min(...old.filter((i) => i.symbol?.reference === "U1").map((i) => gap(capBox, i.box)));
        expect(near).toBeLessThanOrEqual(15);
        for (const item of fresh.filter((i) => i.kind !== "junction")) {
          const box =
            item.kind === "wire"
              ? {
                  ...item.box,
                  ...(item.box.x0 === item.box.x1
                    ? { y0: item.box.y0 + 0.01, y1: item.box.y1 - 0.01 }
                    : { x0: item.box.x0 + 0.01, x1: item.box.x1 - 0.01 }),
                }
              : item.box;
          expect(
            old
              .filter((o) => overlaps(box, o.box))
              .map((o) => `${item.kind} over ${o.kind} ${o.symbol?.reference ?? ""}`),
          ).toEqual([]);
        }
        for (const power of fresh.filter((i) => i.symbol?.power)) expect(power.symbol!.rotation).toBe(0);
        const symbol = cap.symbols[0]!;
        const tip = (n: string) => placePoint(unitPins(symbol, 1).find((p) => p.number === n)!.at, symbol.placement);
        expect(tip("1").y).toBeLessThan(tip("2").y);

        // The board: inside the outline, clear of every other courtyard on its side.
        const board = Board.load(findBoard(repo));
        const footprint = board.footprints().find((f) => f.ref === "C900")!;
        const courtyard = boardBounds(footprint.node)!;
        expect(insideOutline(board, courtyard)).toBe(true);
        const clash = board
          .footprints()
          .filter((f) => oldFootprints.includes(f.ref) && f.layer === footprint.layer)
          .filter((f) => {
            const b = boardBounds(f.node);
            return (
              b !== undefined &&
              b.minX < courtyard.maxX &&
              courtyard.minX < b.maxX &&
              b.minY < courtyard.maxY &&
              courtyard.minY < b.maxY
            );
          });
        expect(clash.map((f) => f.ref)).toEqual([]);
        console.log(
          `${c.id}: C900 ${near.toFixed(2)} mm from U1 on ${cap.sheet}; footprint at ${footprint.at.x}, ${footprint.at.y} on ${footprint.layer}`,
        );
      },
      TIMEOUT,
    );
  }
});

function findRoot(repo: string): string {
  return discoverProject(repo).schematic;
}

function findBoard(repo: string): string {
  return discoverProject(repo).board!;
}
