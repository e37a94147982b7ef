/**
 * The semantic diff on the built-in board: for each kind of change a scripted edit makes, the
 * diff holds exactly the expected entries and nothing else. Edits go through the product's own
 * schematic editor where it has the operation, else through the lossless tree the way KiCad
 * would save them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runDiff, type DiffResult } from "../../src/commands/diff.ts";
import { diffShort } from "../../src/diff/format.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { git } from "../repo/git-repo.ts";
import { BoardEdit } from "../support/board-edits.ts";
import { expectOnly as expectUsbLed, type Sections } from "../support/diff.ts";
import { rejectedCopperheadError } from "../support/errors.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { copyRepo, initialisedRepo } from "../support/repos.ts";
import {
  addResistor,
  deleteHeader,
  moveHeaderToRegulator,
  renameLedNet,
  rootSheet,
  setField,
} from "../support/usb-led-edits.ts";

afterAll(cleanupTempDirs);

let template: string;
beforeAll(async () => {
  template = await initialisedRepo();
}, 60_000);

const ROOT_SHEET = { path: "/", status: "changed" as const, file: "usb-led.kicad_sch" };
const BOARD = "usb-led.kicad_pcb";

const expectOnly = (result: DiffResult, expected: Partial<Sections>) =>
  expectUsbLed(result, "usb-led.kicad_pro", expected);

/** A private copy of the committed repo with `edit` applied to its working tree. */
async function edited(edit: (repo: string) => void | Promise<void>): Promise<string> {
  const repo = await copyRepo(template);
  await edit(repo);
  return repo;
}

const editor = async (repo: string) => SchematicEditor.open(join(repo, "usb-led.kicad_sch"), await openLibraries(repo));
const board = (repo: string, edit: (b: BoardEdit) => void) => {
  const b = new BoardEdit(join(repo, BOARD));
  edit(b);
  b.save();
};
const r3 = {
  ref: "R3",
  sheet: "/",
  value: "1k",
  footprint: "Resistor_SMD:R_0603_1608Metric",
  libId: "Device:R",
  moves: [],
  pins: [],
};

describe("a state against itself", () => {
  test("the working tree of a clean checkout against HEAD is empty, and the JSON is the same every time", async () => {
    const repo = await copyRepo(template);
    const first = await runDiff({ repo });
    expectOnly(first, {});
    expect(first.empty).toBe(true);
    expect(first.head.commit).toBeNull();
    expect(first.base.commit).toBe((await git(repo, "rev-parse", "HEAD")).trim());
    expect(JSON.stringify(await runDiff({ repo }))).toBe(JSON.stringify(first));
  });

  test("a commit against itself is empty", async () => {
    const repo = await edited((r) => setField(r, "R3", "Value", "2k2"));
    expectOnly(await runDiff({ repo, base: "HEAD", head: "HEAD" }), {});
    expectOnly(await runDiff({ repo, base: "HEAD~1", head: "HEAD~1" }), {});
  });
});

describe("parts", () => {
  test("a changed value is one changed part", async () => {
    const repo = await edited((r) => setField(r, "R3", "Value", "2k2"));
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      components: [
        { ...r3, status: "changed", value: "2k2", changes: [{ field: "Value", before: "1k", after: "2k2" }] },
      ],
    });
  });

  test("footprint and MPN fields, and a new field", async () => {
    const repo = await edited((r) => {
      const sheet = rootSheet(r);
      sheet.setField("R3", "Footprint", "Resistor_SMD:R_0805_2012Metric");
      sheet.setField("R3", "MPN", "RC0805FR-071KL");
      sheet.save();
    });
    const e = await editor(repo);
    e.setField("R3", "Tolerance", "1%");
    e.save();
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      components: [
        {
          ...r3,
          status: "changed",
          footprint: "Resistor_SMD:R_0805_2012Metric",
          changes: [
            { field: "Footprint", before: "Resistor_SMD:R_0603_1608Metric", after: "Resistor_SMD:R_0805_2012Metric" },
            { field: "MPN", before: "RC0603FR-071KL", after: "RC0805FR-071KL" },
            { field: "Tolerance", before: null, after: "1%" },
          ],
        },
      ],
    });
  });

  test("another library symbol with the same pins is a lib_id change", async () => {
    const repo = await edited((r) => {
      const path = join(r, "usb-led.kicad_sch");
      const text = readFileSync(path, "utf8");
      // The embedded symbol stays the one it was drawn from (`lib_name`), as KiCad writes it.
      const uuidAt = text.indexOf('(property "Reference" "R3"');
      const symbolAt = text.lastIndexOf('(lib_id "Device:R")', uuidAt);
      writeFileSync(
        path,
        `${text.slice(0, symbolAt)}(lib_name "Device:R") (lib_id "Device:R_Small")${text.slice(symbolAt + '(lib_id "Device:R")'.length)}`,
      );
    });
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      components: [
        {
          ...r3,
          status: "changed",
          libId: "Device:R_Small",
          changes: [{ field: "lib_id", before: "Device:R", after: "Device:R_Small" }],
        },
      ],
    });
  });

  test("DNP and exclude-from-BOM are attribute changes", async () => {
    const repo = await edited((r) => {
      const path = join(r, "usb-led.kicad_sch");
      const text = readFileSync(path, "utf8");
      const at = text.lastIndexOf("(dnp no)", text.indexOf('(property "Reference" "R3"'));
      const bom = text.lastIndexOf("(in_bom yes)", at);
      writeFileSync(path, `${text.slice(0, bom)}(in_bom no)${text.slice(bom + 12, at)}(dnp yes)${text.slice(at + 8)}`);
    });
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      components: [
        {
          ...r3,
          status: "changed",
          changes: [
            { field: "in_bom", before: "yes", after: "no" },
            { field: "dnp", before: "no", after: "yes" },
          ],
        },
      ],
    });
  });

  test("an added part, with the nets its pins joined (no net changes: they existed)", async () => {
    const repo = await edited((r) => addResistor(r));
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      components: [
        {
          ref: "R4",
          status: "added",
          sheet: "/",
          value: "10k",
          footprint: "Resistor_SMD:R_0603_1608Metric",
          libId: "Device:R",
          changes: [],
          moves: [],
          pins: [
            { pin: "1", net: "/LED_A" },
            { pin: "2", net: "GND" },
          ],
        },
      ],
    });
  });

  test("a removed part, with the nets it left", async () => {
    const repo = await edited((r) => deleteHeader(r));
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      components: [
        {
          ref: "J2",
          status: "removed",
          sheet: "/",
          value: "3V3_OUT",
          footprint: "Connector_PinHeader_2.54mm:PinHeader_1x02_P2.54mm_Vertical",
          libId: "Connector_Generic:Conn_01x02",
          changes: [],
          moves: [],
          pins: [
            { pin: "1", net: "+3V3" },
            { pin: "2", net: "GND" },
          ],
        },
      ],
    });
  });

  test("a part moved to another sheet keeps its nets: a sheet change, no connectivity change", async () => {
    const repo = await edited((r) => moveHeaderToRegulator(r));
    const diff = await runDiff({ repo });
    expectOnly(diff, {
      sheets: [ROOT_SHEET, { path: "/Regulator/", status: "changed", file: "regulator.kicad_sch" }],
      components: [
        {
          ref: "J2",
          status: "changed",
          sheet: "/Regulator/",
          value: "3V3_OUT",
          footprint: "Connector_PinHeader_2.54mm:PinHeader_1x02_P2.54mm_Vertical",
          libId: "Connector_Generic:Conn_01x02",
          changes: [{ field: "sheet", before: "/", after: "/Regulator/" }],
          moves: [],
          pins: [],
        },
      ],
    });
  });

  test("a pure move of a symbol is a move, not a connectivity change", async () => {
    const repo = await edited((r) => {
      const sheet = rootSheet(r);
      sheet.moveSymbol("D1", 5.08, 0);
      sheet.save();
    });
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      components: [
        {
          ref: "D1",
          status: "moved",
          sheet: "/",
          value: "Green",
          footprint: "LED_SMD:LED_0603_1608Metric",
          libId: "Device:LED",
          changes: [],
          moves: [
            {
              unit: 1,
              sheet: "/",
              before: { x: 142.24, y: 101.6, angle: 90 },
              after: { x: 147.32, y: 101.6, angle: 90 },
            },
          ],
          pins: [],
        },
      ],
    });
  });
});

describe("nets and pins", () => {
  test("a renamed net is a rename: its pins stayed together", async () => {
    const repo = await edited((r) => renameLedNet(r, "LED_ANODE"));
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      nets: [{ status: "renamed", name: "/LED_ANODE", before: "/LED_A", members: ["D1.2", "R3.2"] }],
    });
  });

  test("a pin moved to another existing net", async () => {
    const repo = await edited(async (r) => {
      const e = await editor(r);
      e.disconnect("R3", "1");
      e.connect("R3", "1", "VBUS");
      e.save();
    });
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      pins: [{ member: "R3.1", before: "+3V3", after: "VBUS" }],
    });
  });

  test("a pin moved to a new net: the net is added and the pin moved into it", async () => {
    const repo = await edited(async (r) => {
      const e = await editor(r);
      e.disconnect("R3", "1");
      e.connect("R3", "1", "VBUS_PROT");
      e.save();
    });
    expectOnly(await runDiff({ repo }), {
      sheets: [ROOT_SHEET],
      nets: [{ status: "added", name: "/VBUS_PROT", members: ["R3.1"] }],
      pins: [{ member: "R3.1", before: "+3V3", after: "/VBUS_PROT" }],
    });
  });
});

describe("board", () => {
  const fp = (ref: string) => new BoardEdit(join(template, BOARD)).board.footprints().find((f) => f.ref === ref)!;

  test("a moved and turned footprint", async () => {
    const repo = await edited((r) => board(r, (b) => b.moveFootprint("R3", 1, -0.5, 90)));
    const at = fp("R3").at;
    expectOnly(await runDiff({ repo }), {
      board: {
        ...emptyBoard(),
        footprints: [
          {
            ref: "R3",
            status: "moved",
            libId: "Resistor_SMD:R_0603_1608Metric",
            value: "1k",
            move: {
              before: { x: at.x, y: at.y, angle: at.rotation, layer: "F.Cu" },
              after: { x: at.x + 1, y: at.y - 0.5, angle: 90, layer: "F.Cu" },
            },
            changes: [],
            pads: [],
          },
        ],
      },
    });
  });

  test("a swapped footprint", async () => {
    const repo = await edited((r) => board(r, (b) => b.swapFootprint("R3", "Resistor_SMD:R_0805_2012Metric")));
    expectOnly(await runDiff({ repo }), {
      board: {
        ...emptyBoard(),
        footprints: [
          {
            ref: "R3",
            status: "swapped",
            libId: "Resistor_SMD:R_0805_2012Metric",
            value: "1k",
            swappedFrom: "Resistor_SMD:R_0603_1608Metric",
            changes: [],
            pads: [],
          },
        ],
      },
    });
  });

  test("a net renamed on the pads is one rename; the tracks on it are unchanged", async () => {
    const repo = await edited((r) => board(r, (b) => b.renameNet("VBUS", "VBUS_IN")));
    expectOnly(await runDiff({ repo }), {
      board: {
        ...emptyBoard(),
        nets: [
          { status: "renamed", name: "VBUS_IN", before: "VBUS", members: ["C1.1", "J1.A9", "J1.B9", "U1.1", "U1.3"] },
        ],
      },
    });
  });

  test("a pad moved to another net", async () => {
    const repo = await edited((r) => board(r, (b) => b.setPadNet("R3", "1", "VBUS")));
    expectOnly(await runDiff({ repo }), {
      board: { ...emptyBoard(), pads: [{ member: "R3.1", before: "+3V3", after: "VBUS" }] },
    });
  });

  test("tracks and vias added and removed", async () => {
    const repo = await edited((r) =>
      board(r, (b) => {
        b.addSegment([110, 95], [115, 95], "B.Cu", "GND", 0.4);
        b.addVia([115, 95], "GND");
        b.removeSegment([135.5, 87]);
      }),
    );
    expectOnly(await runDiff({ repo }), {
      board: {
        ...emptyBoard(),
        tracks: [
          {
            status: "removed",
            kind: "segment",
            net: "+3V3",
            layers: ["F.Cu"],
            start: [135.5, 87],
            end: [135.5, 89.6],
            width: 0.4,
          },
          {
            status: "added",
            kind: "segment",
            net: "GND",
            layers: ["B.Cu"],
            start: [110, 95],
            end: [115, 95],
            width: 0.4,
          },
          { status: "added", kind: "via", net: "GND", layers: ["F.Cu", "B.Cu"], start: [115, 95], width: 0.6 },
        ],
      },
    });
  });

  test("the commit body's short form counts tracks and vias apart", async () => {
    const repo = await edited((r) =>
      board(r, (b) => {
        b.addSegment([110, 95], [115, 95], "B.Cu", "GND", 0.4);
        b.addSegment([115, 95], [115, 97], "B.Cu", "GND", 0.4);
        b.addSegment([115, 97], [118, 97], "B.Cu", "GND", 0.4);
        b.addVia([118, 97], "GND");
        b.removeSegment([135.5, 87]);
      }),
    );
    expect(diffShort(await runDiff({ repo }))).toBe("Design changes:\n- board: tracks +3/-1, vias +1");
  });

  test("a zone added", async () => {
    const repo = await edited((r) => board(r, (b) => b.addZone("GND", "B.Cu", [100, 83], [140, 102])));
    expectOnly(await runDiff({ repo }), {
      board: {
        ...emptyBoard(),
        zones: [{ status: "added", net: "GND", layers: ["B.Cu"], name: "", ruleArea: false, corners: 4 }],
      },
    });
  });

  test("a layer renamed, and the outline resized", async () => {
    const repo = await edited((r) =>
      board(r, (b) => {
        b.renameLayer("User.1", "Assembly");
        b.resizeOutline([145, 102]);
      }),
    );
    expectOnly(await runDiff({ repo }), {
      board: {
        ...emptyBoard(),
        layers: [{ status: "changed", layer: "User.1", before: "user", after: 'user "Assembly"' }],
        outline: { before: { width: 40, height: 19 }, after: { width: 45, height: 19 }, added: 1, removed: 1 },
      },
    });
  });

  test("a board file changed in nothing compared is still reported as changed", async () => {
    const repo = await edited((r) =>
      writeFileSync(join(r, BOARD), readFileSync(join(r, BOARD), "utf8").replace("(thickness 1.6)", "(thickness 1.2)")),
    );
    expectOnly(await runDiff({ repo }), { board: emptyBoard() });
  });
});

describe("docs", () => {
  const spec = (repo: string) => join(repo, "docs/SPEC.md");

  test("requirements added, removed and changed, rule by rule", async () => {
    const repo = await edited((r) => {
      const text = readFileSync(spec(r), "utf8")
        .replace("- REQ-CON-1: Connector J1 keeps pin A9 on VBUS.\n  - check: J1.A9 on VBUS\n", "")
        .replace("  - check: net VBUS exists\n", "  - check: net VBUS exists\n  - check: net /LED_A exists\n")
        .replace("The design keeps at least 3 `R*` parts.", "The design keeps at least 3 resistors.")
        .replace("- REQ-MECH-1:", "- REQ-LED-1: The status LED is green.\n  - check: D1.value == Green\n- REQ-MECH-1:");
      writeFileSync(spec(r), text);
    });
    expectOnly(await runDiff({ repo }), {
      requirements: [
        {
          id: "REQ-BOM-1",
          status: "changed",
          text: "The design keeps at least 3 resistors.",
          textBefore: "The design keeps at least 3 `R*` parts.",
          checksAdded: [],
          checksRemoved: [],
        },
        {
          id: "REQ-CON-1",
          status: "removed",
          text: "Connector J1 keeps pin A9 on VBUS.",
          checksAdded: [],
          checksRemoved: ["J1.A9 on VBUS"],
        },
        {
          id: "REQ-LED-1",
          status: "added",
          text: "The status LED is green.",
          checksAdded: ["D1.value == Green"],
          checksRemoved: [],
        },
        {
          id: "REQ-PWR-1",
          status: "changed",
          text: "The power nets +3V3, GND and VBUS exist.",
          checksAdded: ["net /LED_A exists"],
          checksRemoved: [],
        },
      ],
    });
  });

  test("BOM rows: a generated cell and a human cell changed, a row removed", async () => {
    const repo = await edited((r) => {
      const path = join(r, "docs/BOM.md");
      const text = readFileSync(path, "utf8")
        .replace(
          "| R3 | 1k | Resistor_SMD:R_0603_1608Metric | RC0603FR-071KL |  |  |",
          "| R3 | 2k2 | Resistor_SMD:R_0603_1608Metric | RC0603FR-071KL |  | brighter |",
        )
        .replace(/^\| J2 .*\n/m, "");
      writeFileSync(path, text);
    });
    expectOnly(await runDiff({ repo }), {
      bom: [
        {
          ref: "J2",
          status: "removed",
          changes: [
            { field: "Value", before: "3V3_OUT", after: null },
            { field: "Footprint", before: "Connector_PinHeader_2.54mm:PinHeader_1x02_P2.54mm_Vertical", after: null },
            { field: "MPN", before: "61300211121", after: null },
          ],
        },
        {
          ref: "R3",
          status: "changed",
          changes: [
            { field: "Value", before: "1k", after: "2k2" },
            { field: "Notes", before: "", after: "brighter" },
          ],
        },
      ],
    });
  });

  test("a broken BOM table is said once, not fatal", async () => {
    const repo = await edited((r) => {
      const path = join(r, "docs/BOM.md");
      writeFileSync(path, readFileSync(path, "utf8").replace("<!-- copperhead:bom:end -->", ""));
    });
    const diff = await runDiff({ repo });
    expect(diff.problems).toHaveLength(1);
    expect(diff.problems[0]).toContain("the working tree: docs/BOM.md");
    expect(diff.problems[0]).toContain("end marker");
    expect(diff.bom.map((r) => r.status)).toEqual(new Array(9).fill("removed"));
  });
});

describe("states", () => {
  test("--base and --head name two commits; the working tree is not read", async () => {
    const repo = await edited((r) => setField(r, "R3", "Value", "2k2"));
    await git(repo, "commit", "--quiet", "-am", "R3 2k2");
    setField(repo, "R1", "Value", "4k7");
    const diff = await runDiff({ repo, base: "HEAD~1", head: "HEAD" });
    expect(diff.head.commit).toBe((await git(repo, "rev-parse", "HEAD")).trim());
    expectOnly(diff, {
      sheets: [ROOT_SHEET],
      components: [
        { ...r3, status: "changed", value: "2k2", changes: [{ field: "Value", before: "1k", after: "2k2" }] },
      ],
    });
  });

  test("a project that does not exist at the base shows as all added", async () => {
    const repo = await copyRepo(template);
    await git(repo, "checkout", "--quiet", "--orphan", "bare");
    await git(repo, "rm", "-r", "--quiet", "--cached", ".");
    writeFileSync(join(repo, "README.md"), "nothing yet\n");
    await git(repo, "add", "README.md");
    await git(repo, "commit", "--quiet", "-m", "before the design");
    const diff = await runDiff({ repo, base: "bare", head: "main" });
    expect(diff.empty).toBe(false);
    expect(new Set(diff.components.map((c) => c.status))).toEqual(new Set(["added"]));
    expect(diff.components.map((c) => c.ref)).toEqual(["C1", "C2", "D1", "J1", "J2", "R1", "R2", "R3", "U1"]);
    expect(diff.nets.map((n) => `${n.status} ${n.name}`)).toEqual([
      "added +3V3",
      "added /CC1",
      "added /CC2",
      "added /LED_A",
      "added GND",
      "added VBUS",
      "added unconnected-(U1-NC-Pad4)",
    ]);
    expect(diff.pins).toEqual([]);
    expect(diff.sheets.map((s) => `${s.status} ${s.path}`)).toEqual(["added /", "added /Regulator/"]);
    expect(diff.board?.status).toBe("added");
    expect(diff.requirements.map((r) => r.status)).toEqual(["added", "added", "added", "added"]);
    expect(diff.bom).toHaveLength(9);
  });

  test("an unknown ref is not_found, naming the ref and how to name one", async () => {
    const repo = await copyRepo(template);
    const err = await rejectedCopperheadError(runDiff({ repo, base: "no-such-branch" }));
    expect(err.code).toBe("not_found");
    expect(err.message).toContain('"no-such-branch"');
    expect(err.exitCode).toBe(3);
  });

  test("a folder that is no git repository cannot be diffed against HEAD", async () => {
    const repo = await makeTempDir();
    cpSync(join(template, "usb-led.kicad_pro"), join(repo, "usb-led.kicad_pro"));
    cpSync(join(template, "usb-led.kicad_sch"), join(repo, "usb-led.kicad_sch"));
    cpSync(join(template, "regulator.kicad_sch"), join(repo, "regulator.kicad_sch"));
    expect((await rejectedCopperheadError(runDiff({ repo }))).code).toBe("not_a_git_repo");
  });
});

function emptyBoard() {
  return {
    status: "changed" as const,
    footprints: [],
    nets: [],
    pads: [],
    tracks: [],
    zones: [],
    layers: [],
    outline: null,
  };
}
