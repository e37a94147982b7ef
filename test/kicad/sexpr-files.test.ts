/**
 * Design files keep every byte no edit touched, bytes that are not UTF-8 included, through the
 * real edit paths: the schematic editor, board sync, and a committed `copperhead do` run.
 * Each copy of usb-led gets a Latin-1 `é` (the single byte 0xE9) in the `generator` strings
 * of a sheet and of the board, lines no edit changes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createReplayProvider } from "../../src/agent/providers/replay.ts";
import { runDo } from "../../src/commands/do.ts";
import { syncBoard } from "../../src/kicad/board/sync/sync-board.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { childText } from "../../src/kicad/sexpr/index.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { cleanupTempDirs, copyFixture, FIXTURES_DIR } from "../support/kicad.ts";
import { initialisedRepo } from "../support/repos.ts";

afterAll(cleanupTempDirs);

const KICAD_TIMEOUT = 180_000;
const LATIN1_E = Buffer.from([0xe9]);

/** Appends a Latin-1 é to the file's `(generator "…")` string; returns the new line's bytes. */
function addLatin1Byte(path: string, generator: string): Buffer {
  const before = readFileSync(path);
  const line = Buffer.from(`\t(generator "${generator}`);
  const at = before.indexOf(line) + line.length;
  expect(at).toBeGreaterThan(line.length);
  writeFileSync(path, Buffer.concat([before.subarray(0, at), LATIN1_E, before.subarray(at)]));
  return Buffer.concat([line, LATIN1_E, Buffer.from('")\n')]);
}

/** Lines as bytes (split at LF), so no decoding can hide a changed byte. */
function lines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
    out.push(bytes.subarray(start, nl + 1));
    start = nl + 1;
  }
  if (start < bytes.length) out.push(bytes.subarray(start));
  return out;
}

/** True when every line of `before` is in `after`, in order and byte for byte: lines were only added. */
function onlyAdded(before: Buffer, after: Buffer): boolean {
  const wanted = lines(before);
  let i = 0;
  for (const line of lines(after)) if (i < wanted.length && line.equals(wanted[i]!)) i++;
  return i === wanted.length;
}

async function addCapacitor(dir: string): Promise<void> {
  const editor = SchematicEditor.open(join(dir, "usb-led.kicad_sch"), await openLibraries(dir));
  editor.addComponent({
    libId: "Device:C",
    value: "100n",
    footprint: "Capacitor_SMD:C_0603_1608Metric",
    sheet: "/Regulator/",
  });
  editor.save();
}

describe("bytes that are not UTF-8 survive edits of other nodes", () => {
  test("the schematic editor adds a part; the sheet only gains lines", async () => {
    const dir = await copyFixture("usb-led");
    const sheet = join(dir, "regulator.kicad_sch");
    const marked = addLatin1Byte(sheet, "eeschema");
    const before = readFileSync(sheet);
    await addCapacitor(dir);
    const after = readFileSync(sheet);
    expect(after.length).toBeGreaterThan(before.length);
    expect(onlyAdded(before, after)).toBe(true);
    expect(lines(after).filter((l) => l.equals(marked)).length).toBe(1);
    // Readers see the byte as Latin-1, like KiCad.
    expect(
      childText(loadSchematicProject(join(dir, "usb-led.kicad_sch")).files.get(sheet)!.doc.root, "generator"),
    ).toBe("eeschemaé");
  });

  test(
    "board sync adds the new footprint and keeps the marked line; a second sync writes nothing",
    async () => {
      const dir = await copyFixture("usb-led");
      const board = join(dir, "usb-led.kicad_pcb");
      const marked = addLatin1Byte(board, "pcbnew");
      const before = readFileSync(board);

      expect((await syncBoard(discoverProject(dir))).written).toBe(false);
      expect(readFileSync(board).equals(before)).toBe(true);

      await addCapacitor(dir);
      expect((await syncBoard(discoverProject(dir))).written).toBe(true);
      const after = readFileSync(board);
      expect(lines(after).filter((l) => l.equals(marked)).length).toBe(1);
      expect(lines(after).slice(0, 3)).toEqual(lines(before).slice(0, 3));

      expect((await syncBoard(discoverProject(dir))).written).toBe(false);
      expect(readFileSync(board).equals(after)).toBe(true);
    },
    KICAD_TIMEOUT,
  );

  test(
    "copperhead do commits the edited sheet and board with the byte where it was",
    async () => {
      const marks = new Map<string, Buffer>();
      const repo = await initialisedRepo((dir) => {
        marks.set("regulator.kicad_sch", addLatin1Byte(join(dir, "regulator.kicad_sch"), "eeschema"));
        marks.set("usb-led.kicad_pcb", addLatin1Byte(join(dir, "usb-led.kicad_pcb"), "pcbnew"));
      });
      const summary = await runDo({
        request: "Add a 100 nF decoupling capacitor on the LDO output",
        repo,
        provider: createReplayProvider(join(FIXTURES_DIR, "sessions", "add-decoupling-cap.json")),
      });
      expect(summary.status).toBe("committed");
      for (const [file, marked] of marks) {
        expect(summary.filesTouched).toContain(file);
        const parent = Buffer.from(Bun.spawnSync(["git", "-C", repo, "show", `HEAD~1:${file}`]).stdout);
        const committed = Buffer.from(Bun.spawnSync(["git", "-C", repo, "show", `HEAD:${file}`]).stdout);
        expect(committed.equals(parent)).toBe(false);
        expect(lines(parent).filter((l) => l.equals(marked)).length).toBe(1);
        expect(lines(committed).filter((l) => l.equals(marked)).length).toBe(1);
      }
    },
    KICAD_TIMEOUT,
  );
});
