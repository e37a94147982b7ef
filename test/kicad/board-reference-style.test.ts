/**
 * A footprint `sync_board` adds keeps the board's silkscreen as the designer keeps it: where the
 * board hides the reference of its like footprints (pico-ice, every 0402 capacitor's), the new
 * one's is hidden too, and neither drawn nor in a new spot's way; where the board shows them
 * (usb-led), it is shown. Called as the model calls the tools, on copies of the real boards;
 * KiCad's own reading of the saved board says what is shown.
 */
import { afterAll, expect, test } from "bun:test";
import { basename, join } from "node:path";
import { runKicadPython } from "../../src/kicad/cli/python.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { finishAdditions, sessionTarget } from "../support/board-finish.ts";
import { fixtureCorpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { initialisedCorpusRepo, initialisedRepo } from "../support/repos.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

/** Whether KiCad shows the reference of `ref` on the board saved at `file`. */
async function shownByKicad(file: string, ref: string): Promise<boolean> {
  const out = await runKicadPython(
    `import sys, pcbnew
print(pcbnew.LoadBoard(sys.argv[1]).FindFootprintByReference(sys.argv[2]).Reference().IsVisible())
`,
    "read whether a reference is shown",
    { timeoutMs: 120_000, args: [file, ref] },
  );
  return out.trim() === "True";
}

/** Adds `inputs` on the repo's schematic and syncs the board, as a run does. */
async function addAndSync(repo: string, inputs: Record<string, unknown>[]): Promise<void> {
  await withTools(repo, async ({ call }) => {
    for (const input of inputs) await call("add_component", input);
    await call("sync_board");
  });
}

test("pico-ice-rev3: a new 0402 capacitor's reference is hidden, as every other one's on the board", async () => {
  const project = fixtureCorpusProjects().find((p) => p.id === "fixtures/pico-ice-rev3")!;
  const repo = await initialisedCorpusRepo(project);
  const file = join(repo, basename(project.board!));
  const board = Board.load(file);
  const { capacitor } = finishAdditions(board, sessionTarget(project.id, board));
  await addAndSync(repo, capacitor);
  expect(await shownByKicad(file, capacitor[0]!.ref as string)).toBe(false);
}, 300_000);

test("usb-led: a new capacitor's reference is shown, as the board's own are", async () => {
  const repo = await initialisedRepo();
  const file = join(repo, "usb-led.kicad_pcb");
  await addAndSync(repo, [
    {
      lib_id: "Device:C",
      value: "100n",
      footprint: "Capacitor_SMD:C_0603_1608Metric",
      ref: "C900",
      near: "U1",
      connect: { "1": "+3V3", "2": "GND" },
    },
  ]);
  expect(await shownByKicad(file, "C900")).toBe(true);
}, 300_000);
