/**
 * Issue acceptance for subcircuits: a request that adds several parts and the nets among them,
 * through the compiled binary with a scripted session, on real boards (support/board-finish.ts
 * judges each commit by raw `kicad-cli pcb drc` against the base). Each commits with nothing left
 * for layout; raw DRC has no new error, no new warning type and no new unconnected item; every
 * zone around the new parts is KiCad's own refill of the committed board; and in KiCad's render
 * of the sheets no drawing crosses a new part's reference or value.
 *
 * - a linear regulator with its input and output capacitors making a new rail, on the
 *   multichannel mixer (a two-layer board poured on the back), next to its supply connector;
 * - an I2C EEPROM with its address pins strapped and its decoupling capacitor, on Glasgow (a
 *   dense four-layer board whose sheets are full): on a sheet of its own, added for it, and on
 *   the board beside the bus's EEPROMs, which are drawn on another sheet;
 * - an indicator LED by a connector with its series resistor by the regulator, on
 *   pic_programmer: the net between the two new parts runs 37 mm across the board.
 *
 * `SUBCIRCUIT_ONLY=<project id's end>` narrows it while working on one.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { exportSvg, runDrc, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { discoverProject } from "../../src/repo/project.ts";
import {
  checkRefillChangesNothing,
  drcKeys,
  runAndCheck,
  turn,
  use,
  type FinishSession,
} from "../support/board-finish.ts";
import { around } from "../support/board-zones.ts";
import { allProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { initialisedCorpusRepo } from "../support/repos.ts";
import { textOverlaps } from "../support/svg-text.ts";
import { requireBinary } from "./binary.ts";

/** Generous: Glasgow's raw DRC and KiCad's refill of it take minutes on a loaded machine. */
const TIMEOUT = 1_500_000;

/** A subcircuit request on one project, with the texts its new symbols show that must read clear. */
interface Subcircuit {
  project: string;
  session: FinishSession;
  /** Texts only the new parts draw: their references and distinctive values. */
  texts: string[];
}

const propose = (title: string, why: string, changes: string[], nets: string[], newRefs: string[], newNets: string[]) =>
  turn(
    use("t1", "propose_change", {
      title,
      why,
      changes,
      requirements_touched: [],
      verification: "ERC and DRC show no new error; parity holds; every new connection is routed.",
      refs: [],
      nets,
      new_refs: newRefs,
      new_nets: newNets,
    }),
  );

const REGULATOR: Subcircuit = {
  project: "demos/multichannel/multichannel_mixer",
  texts: ["U900", "C900", "C901", "AMS1117-5.0"],
  session: {
    request:
      "add a 5 V linear regulator fed from +12V next to J5, with 10 uF input and output capacitors, making a new +5V rail",
    added: [
      { ref: "U900", anchor: "J5" },
      { ref: "C900", anchor: "U900" },
      { ref: "C901", anchor: "U900" },
    ],
    turns: [
      propose(
        "Add a +5V rail from +12V",
        "Digital parts to come need 5 V; an AMS1117-5.0 from +12V by the supply connector J5 makes it, with the 10 uF its datasheet asks for on each side.",
        [
          "add U900, AMS1117-5.0 (SOT-223), next to J5, from +12V to a new +5V",
          "add C900, 10 uF 0805, on its input; C901, 10 uF 0805, on its output",
          "sync the board: the three go together beside J5",
        ],
        ["+12V", "GND"],
        ["U900", "C900", "C901"],
        ["+5V"],
      ),
      turn(
        use("t2", "add_component", {
          lib_id: "Regulator_Linear:AMS1117-5.0",
          value: "AMS1117-5.0",
          footprint: "Package_TO_SOT_SMD:SOT-223-3_TabPin2",
          ref: "U900",
          near: "J5",
          connect: { VI: "+12V", VO: "+5V", GND: "GND" },
        }),
      ),
      turn(
        use("t3", "add_component", {
          lib_id: "Device:C",
          value: "10u",
          footprint: "Capacitor_SMD:C_0805_2012Metric",
          ref: "C900",
          near: "U900",
          connect: { "1": "+12V", "2": "GND" },
        }),
        use("t4", "add_component", {
          lib_id: "Device:C",
          value: "10u",
          footprint: "Capacitor_SMD:C_0805_2012Metric",
          ref: "C901",
          near: "U900",
          connect: { "1": "+5V", "2": "GND" },
        }),
      ),
      turn(use("t5", "sync_board", {})),
      turn(use("t6", "finish", { summary: "Added U900 (AMS1117-5.0) making +5V from +12V, with C900 and C901." })),
    ],
  },
};

const EEPROM: Subcircuit = {
  project: "corpus/glasgow-revc3",
  texts: ["U900", "C900", "24LC02"],
  session: {
    request:
      "add a 24LC02 I2C EEPROM on the SDA/SCL bus next to the FX2's EEPROMs, with its address pins strapped, WP to GND and a 100 nF decoupling capacitor",
    added: [
      { ref: "U900", anchor: "U3" },
      { ref: "C900", anchor: "U900" },
    ],
    turns: [
      propose(
        "Add a 24LC02 EEPROM on the I2C bus",
        "A small EEPROM for board data, beside the EEPROMs U2 and U3 already on the bus. They answer at 0x50 and 0x51, so A0–A2 go to +3V3 (0x57); WP to GND keeps it writable.",
        [
          "add a sheet EEPROM carrying +3V3, GND, SDA and SCL: the existing sheets have no room",
          "add U900, 24LC02 in TSSOP-8 (the board is dense; it already uses TSSOP-8), on it, next to U3: A0–A2 to +3V3, WP to GND",
          "add C900, 100 nF 0603, on its supply pin",
          "sync the board",
        ],
        ["+3V3", "GND", "/SDA", "/SCL"],
        ["U900", "C900"],
        [],
      ),
      turn(
        use("t2", "add_sheet", {
          name: "EEPROM",
          file: "eeprom.kicad_sch",
          nets: ["+3V3", "GND", "/SDA", "/SCL"],
        }),
      ),
      turn(
        use("t3", "add_component", {
          lib_id: "Memory_EEPROM:24LC02",
          value: "24LC02",
          footprint: "Package_SO:TSSOP-8_4.4x3mm_P0.65mm",
          ref: "U900",
          sheet: "/EEPROM/",
          near: "U3",
          connect: {
            A0: "+3V3",
            A1: "+3V3",
            A2: "+3V3",
            GND: "GND",
            SDA: "/SDA",
            SCL: "/SCL",
            WP: "GND",
            VCC: "+3V3",
          },
        }),
      ),
      turn(
        use("t4", "add_component", {
          lib_id: "Device:C",
          value: "100n",
          footprint: "Capacitor_SMD:C_0603_1608Metric",
          ref: "C900",
          near: "U900",
          connect: { "1": "+3V3", "2": "GND" },
        }),
      ),
      turn(use("t5", "sync_board", {})),
      turn(
        use("t6", "finish", {
          summary: "Added U900 (24LC02 at 0x57) on the I2C bus by U3, with C900, on a new sheet EEPROM.",
        }),
      ),
    ],
  },
};

const FAR_LED: Subcircuit = {
  project: "demos/pic_programmer/pic_programmer",
  texts: ["D900", "R900"],
  session: {
    request: "add a VCC indicator LED by the serial connector J1, with its series resistor at the regulator U3",
    added: [
      { ref: "D900", anchor: "J1" },
      { ref: "R900", anchor: "U3" },
    ],
    turns: [
      propose(
        "Add a VCC indicator LED by J1",
        "Whoever plugs in the serial cable should see that the programmer is powered; the resistor sits at the 7805 so the LED's net is the only one crossing the board.",
        [
          "add D900, a 0603 LED, next to J1, from a new net VCC_IND to GND",
          "add R900, 1k 0603, next to U3, from VCC to VCC_IND",
          "sync the board",
        ],
        ["VCC", "GND"],
        ["D900", "R900"],
        ["VCC_IND"],
      ),
      turn(
        use("t2", "add_component", {
          lib_id: "Device:LED",
          value: "LED",
          footprint: "LED_SMD:LED_0603_1608Metric",
          ref: "D900",
          near: "J1",
          connect: { A: "VCC_IND", K: "GND" },
        }),
        use("t3", "add_component", {
          lib_id: "Device:R",
          value: "1k",
          footprint: "Resistor_SMD:R_0603_1608Metric",
          ref: "R900",
          near: "U3",
          connect: { "1": "VCC", "2": "VCC_IND" },
        }),
      ),
      turn(use("t4", "sync_board", {})),
      turn(use("t5", "finish", { summary: "Added D900 by J1 with R900 at U3, lighting while VCC is up." })),
    ],
  },
};

/** Each new part's reference and distinctive value, as KiCad draws them, crossed by nothing else on the sheet. */
async function crossedTexts(cli: KicadCli, schematic: string, texts: string[]): Promise<string[]> {
  const out = await makeTempDir();
  await exportSvg(schematic, out, { cli });
  const svgs = readdirSync(out)
    .filter((f) => f.endsWith(".svg"))
    .map((f) => join(out, f));
  return texts.flatMap((text) => {
    const drawn = svgs.flatMap((svg) => textOverlaps(svg, text).map((d) => ({ svg, ...d })));
    if (drawn.length === 0) return [`${text}: not in the render`];
    return drawn
      .filter((d) => d.crossing.length > 0)
      .map((d) => `${text} in ${d.svg.split("/").pop()}: crossed by ${d.crossing.slice(0, 3).join(" | ")}`);
  });
}

let cli: KicadCli;
beforeAll(async () => {
  requireBinary();
  cli = await requireKicadCli();
}, 120_000);
afterAll(cleanupTempDirs);

describe("a subcircuit in one request arrives drawn, placed as a group, routed and refilled", () => {
  const only = process.env.SUBCIRCUIT_ONLY;
  for (const { project: id, session, texts } of [REGULATOR, EEPROM, FAR_LED].filter(
    (s) => !only || s.project.endsWith(only),
  )) {
    test(
      `${id}: ${session.request}`,
      async () => {
        const project = allProjects().find((p) => p.id === id)!;
        const repo = await initialisedCorpusRepo(project);
        const { board: boardFile, schematic } = discoverProject(repo, project.projectFile);
        const bytes = readFileSync(boardFile!);
        const drc = drcKeys((await runDrc(boardFile!, { cli, timeoutMs: TIMEOUT })).report);
        const done = await runAndCheck(cli, repo, project.projectFile, session, { bytes, drc });
        console.log(`${id}: ${JSON.stringify(done.result)}`);
        expect(done.result.layoutPending).toEqual([]);
        expect([...new Set(done.drc.warnings)].filter((type) => !drc.warnings.includes(type))).toEqual([]);
        await checkRefillChangesNothing(cli, done.board, done.boardFile, done.drc, bytes, {
          window: session.added.flatMap(({ ref }) => around(done.boardFile, ref)),
        });
        expect(await crossedTexts(cli, schematic!, texts)).toEqual([]);
      },
      TIMEOUT,
    );
  }
});
