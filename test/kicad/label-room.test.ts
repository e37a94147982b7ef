/**
 * A renamed label makes room, judged by KiCad's own render: on every sheet of every demo and
 * corpus project, the repository's own corpus too (copies), the label in the sheet's tightest
 * spot is renamed to a name twice as long. Each commits (but for the few `KNOWN_REFUSALS`, which
 * say what each way of making room ran into, and name the longest start of the name that fits:
 * renamed to that, it commits) and reads clear: in `kicad-cli sch export svg`'s
 * drawing no other item crosses the new text. One export per project keeps the sweep to a few
 * minutes.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { exportSvg, runErc, type ErcReport } from "../../src/kicad/cli/kicad-cli.ts";
import { atomText, child, children, text } from "../../src/kicad/sexpr/index.ts";
import { onSegment, placePoint, samePoint } from "../../src/kicad/schematic/geometry.ts";
import { unitPins } from "../../src/kicad/schematic/model/symbols.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEditor } from "../../src/kicad/schematic/edit/editor.ts";
import { drawnThings, intersects, labelBox, type Box, type DrawnBox } from "../../src/kicad/schematic/space.ts";
import type { Label } from "../../src/kicad/schematic/model/sheet-items.ts";
import type { SchematicFile } from "../../src/kicad/schematic/model/schematic-file.ts";
import { allProjects, copyCorpusProject, everyProject } from "../support/corpora.ts";
import type { CopperheadError } from "../../src/errors.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { textOverlaps } from "../support/svg-text.ts";

afterAll(cleanupTempDirs);

/**
 * Renames the sweep still sees refused, by project and net, with what boxes the label in. Every
 * way of making room short of moving another part was tried and ran into something; the sweep
 * asserts each is still refused, so one that commits shows up as a failure asking to shrink this
 * list, and any other refusal fails it.
 */
const KNOWN_REFUSALS: Record<string, Record<string, string>> = {
  "demos/vme-wren/vme-wren": {
    "/fpga/fpga-hp-banks/F_IOEXP_HWBYTE1_RCLK":
      "its run lies in a row of wires a grid step apart, so a stub off it runs into the next wire, the longer name fits nowhere along it, and IC141 ahead, pushed far enough with what lies beyond it, runs a power symbol's Value off the page",
  },
};

/**
 * The label of `file` in its tightest spot: the one whose text, twice as long, would newly run
 * over the most items (as copperhead's boxes see them). Local labels (whose rename changes only
 * this sheet's drawing) first; global ones where a sheet has none. Bus labels are left out, and
 * so are `members` of a bus (see `busMembers`): a bus member keeps its connection through the bus only under
 * its member name, so renaming it alone is refused as changing the nets.
 */
function tightestLabel(
  file: SchematicFile,
  netNames: Set<string>,
  members: Set<string>,
  netOf: (label: Label) => string,
): Label | undefined {
  // Item by item as errors name them: a part's drawing (body and pins) is one, each field another.
  const items = drawnThings(file).flatMap((thing) => [...Map.groupBy(thing.items, (i) => i.what).values()]);
  const candidates = file.labels.filter(
    (l) =>
      (l.kind === "local" || l.kind === "global") &&
      l.text !== "" &&
      !/[[{\s]/.test(l.text) &&
      netNames.has(netOf(l)) &&
      !members.has(l.text),
  );
  const pool = candidates.some((l) => l.kind === "local") ? candidates.filter((l) => l.kind === "local") : candidates;
  let best: { label: Label; fresh: number } | undefined;
  for (const label of pool) {
    const flagged = label.kind !== "local";
    const now = labelBox(label.at, label.text, label.rotation, flagged);
    const longer = labelBox(label.at, doubled(label.text), label.rotation, flagged);
    const hits = (box: Box, item: DrawnBox[]) => item.some((i) => intersects(box, i.box));
    const fresh = items.filter((item) => hits(longer, item) && !hits(now, item)).length;
    if (!best || fresh > best.fresh) best = { label, fresh };
  }
  return best?.label;
}

/** A label's name made twice as long, as the sweep renames it. */
function doubled(name: string): string {
  return name + "X".repeat(name.length);
}

/**
 * The member names of every bus labelled in `files`, in KiCad's bus syntax: `D[0..7]` has
 * members D0 to D7, `SPI{SCK, MOSI}` has SPI.SCK and SPI.MOSI, `ANALOG{A[0..1]}` ANALOG.A0 and
 * ANALOG.A1.
 */
function busMembers(files: SchematicFile[]): Set<string> {
  const vector = (name: string): string[] => {
    const m = /^(.*)\[(\d+)\.\.(\d+)\]$/.exec(name);
    if (!m) return [name];
    const [from, to] = [Number(m[2]), Number(m[3])].sort((x, y) => x - y) as [number, number];
    return Array.from({ length: to - from + 1 }, (_, i) => `${m[1]}${from + i}`);
  };
  const members = new Set<string>();
  for (const file of files)
    for (const { text } of file.labels) {
      const group = /^(.*)\{([^}]*)\}$/.exec(text);
      const names = group
        ? group[2]!
            .split(/[\s,]+/)
            .filter(Boolean)
            .flatMap(vector)
            .map((member) => (group[1] ? `${group[1]}.${member}` : member))
        : text.includes("[")
          ? vector(text)
          : [];
      for (const name of names) members.add(name);
    }
  // Bus aliases (`(bus_alias "VMEPX" (members "VMEPX.A[0..31]" …))`) list their members whole.
  for (const file of files)
    for (const alias of children(file.doc.root, "bus_alias"))
      for (const member of (child(alias, "members")?.items ?? []).slice(1))
        if (member.type === "atom") for (const name of vector(atomText(member))) members.add(name);
  return members;
}

describe("a rename to a name twice as long, in each sheet's tightest spot, commits and reads clear in KiCad's render", () => {
  for (const project of everyProject().filter((p) => p.schematic)) {
    test(project.id, async () => {
      const cli = await requireKicadCli();
      const copy = await copyCorpusProject(project);
      const root = copy.schematic!;
      const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
      const renamed: { sheet: string; from: string; to: string; fitted?: true }[] = [];
      const refused: { net: string; why: string }[] = [];
      const members = busMembers([...editor.project.files.values()]);
      for (const file of editor.project.files.values()) {
        const instance = editor.project.instancesOf(file)[0];
        if (!instance) continue;
        const names = new Set(editor.netlist().nets.map((n) => n.name));
        const netOf = (l: Label) => (l.kind === "global" ? l.text : instance.humanPath + l.text);
        const label = tightestLabel(file, names, members, netOf);
        if (!label) continue;
        const from = netOf(label);
        const to = doubled(label.text);
        if (names.has(label.kind === "global" ? to : instance.humanPath + to)) continue;
        try {
          editor.renameNet(from, to);
          renamed.push({ sheet: instance.humanPath, from, to });
        } catch (err) {
          refused.push({ net: from, why: (err as Error).message });
          // The refusal names the longest start of the name that fits at the label it stopped at: renamed to
          // that (shorter again where another label of the net has less room), it commits, and reads clear below.
          let fits = (err as CopperheadError).details?.fits as { name: string } | undefined;
          while (fits && fits.name !== label.text && !names.has(netOf({ ...label, text: fits.name }))) {
            try {
              editor.renameNet(from, fits.name);
              renamed.push({ sheet: instance.humanPath, from, to: fits.name, fitted: true });
              break;
            } catch (again) {
              const shorter = (again as CopperheadError).details?.fits as { name: string } | undefined;
              if (!shorter || shorter.name.length >= fits.name.length) throw again;
              fits = shorter;
            }
          }
        }
      }
      // Every rename commits, but for the listed ones, whose refusal says what each way ran into.
      const known = KNOWN_REFUSALS[project.id] ?? {};
      for (const { why } of refused) expect(why).toContain("Tried, least change first: turned at the same point:");
      expect(refused.filter((r) => !(r.net in known))).toEqual([]);
      const committed = renamed.filter((r) => !r.fitted && r.from in known).map((r) => r.from);
      if (committed.length > 0)
        throw new Error(`${project.id}: ${committed.join(", ")} now commit: take them off KNOWN_REFUSALS`);
      const stale = Object.keys(known).filter((net) => !refused.some((r) => r.net === net));
      if (stale.length > 0)
        throw new Error(`${project.id}: ${stale.join(", ")} no longer the tightest: take them off KNOWN_REFUSALS`);
      editor.save();
      const out = await makeTempDir();
      await exportSvg(root, out, { cli });
      const svgs = readdirSync(out)
        .filter((f) => f.endsWith(".svg"))
        .map((f) => join(out, f));
      const unreadable: string[] = [];
      for (const r of renamed) {
        const anchors = [...editor.project.files.values()].flatMap((f) =>
          f.labels.filter((l) => l.text === r.to).map((l): [number, number] => [l.at.x / 10_000, l.at.y / 10_000]),
        );
        const drawn = svgs.flatMap((svg) => textOverlaps(svg, r.to, anchors).map((d) => ({ svg, ...d })));
        if (drawn.length === 0) unreadable.push(`${r.sheet} ${r.to}: not found in the render`);
        for (const d of drawn)
          if (d.crossing.length > 0)
            unreadable.push(
              `${r.sheet} ${r.to} (${d.box.x0.toFixed(2)}, ${d.box.y0.toFixed(2)}) in ${d.svg.split("/").pop()}: crossed by ${d.crossing.slice(0, 3).join(" | ")}`,
            );
      }
      console.log(
        `${project.id}: ${renamed.length} renamed (${renamed.map((r) => r.to).join(", ")}); ${refused.length} refused${refused.length ? `:\n  ${refused.map((r) => `${r.net}: ${r.why}`).join("\n  ")}` : ""}`,
      );
      expect(unreadable).toEqual([]);
    }, 180_000);
  }
});

/**
 * A label along a short run whose far end is free goes out beyond that end, the wire lengthened
 * to meet it, when the longer name fits nowhere along the run: vme-wren's TTL_BUNCHCLK1 sits
 * between IC15's pin and a free end, in a row of wires a grid step apart, with C114 ahead.
 */
test("a renamed label moves out beyond its wire's free far end, the wire lengthened to meet it", async () => {
  const project = allProjects().find((p) => p.id === "demos/vme-wren/vme-wren")!;
  const copy = await copyCorpusProject(project);
  const root = copy.schematic!;
  const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
  const file = [...editor.project.files.values()].find((f) => f.path.endsWith("vme_interface.kicad_sch"))!;
  const label = file.labels.find((l) => l.text === "TTL_BUNCHCLK1")!;
  const wire = file.wires.find(
    (w) => w.a.y === label.at.y && Math.min(w.a.x, w.b.x) < label.at.x && Math.max(w.a.x, w.b.x) > label.at.x,
  )!;
  const farEnd = Math.max(wire.a.x, wire.b.x);
  const pins = (nets: { name: string; nodes: { ref: string; pin: string }[] }[]) =>
    nets
      .map((n) =>
        n.nodes
          .map((p) => `${p.ref}.${p.pin}`)
          .sort()
          .join(" "),
      )
      .sort();
  const before = pins(editor.netlist().nets);

  editor.renameNet("/vme_interface/TTL_BUNCHCLK1", "TTL_BUNCHCLK1_BUFFERED_OUT");

  const moved = file.labels.find((l) => l.text === "TTL_BUNCHCLK1_BUFFERED_OUT")!;
  expect(moved.at.y).toBe(label.at.y);
  expect(moved.at.x).toBeGreaterThan(farEnd);
  expect(file.wires.some((w) => w.a.y === moved.at.y && [w.a.x, w.b.x].includes(moved.at.x))).toBe(true);
  expect(pins(editor.netlist().nets)).toEqual(before);
  expect(editor.netlist().nets.map((n) => n.name)).toContain("/vme_interface/TTL_BUNCHCLK1_BUFFERED_OUT");
}, 120_000);

/** ERC's findings by kind and count: what a rename that only makes room must leave as it was. */
function ercKinds(report: ErcReport): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const sheet of report.sheets) for (const v of sheet.violations) kinds[v.type] = (kinds[v.type] ?? 0) + 1;
  return kinds;
}

/**
 * Renames `net` to `to` on a copy of `projectId`, handing `during` the sheet file whose name ends
 * with `sheet` (the root when none is given) and the rename's `madeRoom` before saving, and
 * checks the sheet's symbols, flags, wires and junctions grew by `added` (none unless given);
 * returns ERC's findings by kind before and after, and what in KiCad's render crosses the text
 * of the sheet's renamed labels.
 */
async function renameOnCopy(
  projectId: string,
  net: string,
  to: string,
  during: (file: SchematicFile, madeRoom: string[]) => void,
  sheet?: string,
  added = [0, 0, 0, 0],
): Promise<{ ercBefore: Record<string, number>; ercAfter: Record<string, number>; crossing: string[] }> {
  const cli = await requireKicadCli();
  const copy = await copyCorpusProject(everyProject().find((p) => p.id === projectId)!);
  const root = copy.schematic!;
  const ercBefore = ercKinds(await runErc(root, { cli }));
  const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
  const file = sheet
    ? [...editor.project.files.values()].find((f) => f.path.endsWith(sheet))!
    : editor.project.root.file;
  const counts = () => [file.symbols.length, file.noConnects.length, file.wires.length, file.junctions.length];
  const before = counts();
  during(file, editor.renameNet(net, to).madeRoom);
  // Made room by moving what is there: nothing drawn anew, nothing taken away, but what `added` says.
  expect(counts()).toEqual(before.map((n, i) => n + added[i]!));
  editor.save();
  const ercAfter = ercKinds(await runErc(root, { cli }));
  const anchors = file.labels
    .filter((l) => l.text === to)
    .map((l): [number, number] => [l.at.x / 10_000, l.at.y / 10_000]);
  const svgs = await exportSvg(root, await makeTempDir(), { cli });
  const drawn = svgs.flatMap((svg) => textOverlaps(svg, to, anchors));
  const crossing = [
    ...(drawn.length < anchors.length ? [`${to} drawn ${drawn.length} times for ${anchors.length} labels`] : []),
    ...drawn.flatMap((d) => d.crossing),
  ];
  return { ercBefore, ercAfter, crossing };
}

/**
 * A label whose longer name fits nowhere along its run gets room from the two-pin part in
 * series at the run's end, slid further along: the RP2040 design guide's CC1 runs from the USB
 * connector's pin to R3, whose far pin leaves a wire to the GND corner.
 */
test("a rename slides the two-pin part in series at its wire's end along the run to make room", async () => {
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "corpus/rp2040-designguide",
    "/CC1",
    "CC1XXX",
    (file, madeRoom) => {
      expect(madeRoom).toEqual([
        "RP2040-Guide.kicad_sch: R3 slid 3.81 mm right along its run, its wires stretched and shortened to match",
      ]);
      const r3 = file.symbols.find((s) => s.fields.some((f) => f.name === "Reference" && f.value === "R3"))!;
      expect(r3.placement.at).toEqual({ x: 2_711_450, y: 342_900 });
    },
  );
  // The same nets (`renameNet` checks the netlist) and the same ERC: no pin or wire end left dangling.
  expect(ercAfter).toEqual(ercBefore);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * A sheet gives room the same way, its wires and buses stretched: on vme-wren's top sheet the
 * SFP1 sheet's pins take their runs straight from labels a little to their left.
 */
test("a rename slides the sheet at its wire's end along the run, every wire and bus at its pins stretched", async () => {
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "demos/vme-wren/vme-wren",
    "/SFP1_MODABS",
    `SFP1_MODABS${"X".repeat(22)}`,
    (file, madeRoom) => {
      expect(madeRoom).toEqual([
        "vme-wren.kicad_sch: sheet SFP1 slid 8.89 mm right along its run, its wires stretched and shortened to match",
      ]);
      const sfp1 = file.sheets.find((s) => s.name === "SFP1")!;
      for (const pin of sfp1.pins) {
        expect(pin.at.x).toBe(sfp1.at.x);
        // Each pin's wire or bus still reaches it.
        expect(
          [...file.wires, ...file.buses].some((w) => [w.a, w.b].some((p) => p.x === pin.at.x && p.y === pin.at.y)),
        ).toBe(true);
      }
    },
  );
  // Nothing new; the net's other label, carried out to its wire's lengthened free end, clears ERC's complaint of that end.
  for (const [kind, count] of Object.entries(ercAfter)) expect(count).toBeLessThanOrEqual(ercBefore[kind] ?? 0);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * A part with many pins slides too when every wire at its pins lies along the run, and what sits
 * right on a pin goes with it: on vme-wren's fpga-config sheet IC14's unit N takes JTAG_TMS's
 * run from pin N21, with a GND symbol on pin N17 and a no-connect flag on N18.
 */
test("a rename slides a part with many pins along the run, the power symbol and no-connect flag on its pins going with it", async () => {
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "demos/vme-wren/vme-wren",
    "/fpga/fpga-config/JTAG_TMS",
    `JTAG_TMS${"X".repeat(16)}`,
    (file, madeRoom) => {
      expect(madeRoom).toEqual([
        "fpga-config.kicad_sch: IC14 slid 3.81 mm left along its run, its wires stretched and shortened to match",
      ]);
      const ic14 = file.symbols.find((s) => s.fields.some((f) => f.name === "Reference" && f.value === "IC14"))!;
      const pinAt = (number: string) => {
        const pin = unitPins(ic14, ic14.unit).find((p) => p.number === number)!;
        return placePoint(pin.at, ic14.placement);
      };
      const gnd = pinAt("N17");
      expect(file.symbols.some((s) => s.value === "GND" && samePoint(s.placement.at, gnd))).toBe(true);
      expect(file.noConnects.some((n) => samePoint(n.at, pinAt("N18")))).toBe(true);
    },
    "fpga-config.kicad_sch",
  );
  expect(ercAfter).toEqual(ercBefore);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * Parts drawn side by side on parallel runs slide together, and a run's free tail goes along
 * with its label: on vme-wren's clocks sheet the coupling capacitors C266 and C265 of the
 * WR_CLK_SFP_AC pair sit a little apart, each run ending free beyond them under its label.
 */
test("a rename slides a pair of parts on parallel runs together, their runs' free tails going along with their labels", async () => {
  // The tails' labels at the pair (x 247.65 mm on the sheet as drawn), and the others further on.
  const tails = (file: SchematicFile) =>
    file.labels.filter((l) => l.text.startsWith("WR_CLK.SFP_")).map((l) => [l.text, l.at.x / 10_000, l.at.y / 10_000]);
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "demos/vme-wren/vme-wren",
    "/clocks/WR_CLK_SFP_AC_N",
    `WR_CLK_SFP_AC_N${"X".repeat(15)}`,
    (file, madeRoom) => {
      expect(madeRoom).toEqual([
        "clocks.kicad_sch: C266 and C265 slid 13.97 mm right along their runs, their wires stretched and shortened to match, the free wires beyond going along with their labels",
      ]);
      expect(tails(file)).toEqual([
        ["WR_CLK.SFP_P", 316.23, 38.1],
        ["WR_CLK.SFP_N", 316.23, 40.64],
        ["WR_CLK.SFP_P", 261.62, 20.32],
        ["WR_CLK.SFP_N", 261.62, 22.86],
      ]);
    },
    "clocks.kicad_sch",
  );
  expect(ercAfter).toEqual(ercBefore);
  expect(crossing).toEqual([]);
}, 120_000);

/** Each part of `file` by reference, where it is placed (mm). */
function places(file: SchematicFile): Record<string, [number, number]> {
  return Object.fromEntries(
    file.symbols.map((s) => [
      s.fields.find((f) => f.name === "Reference")!.value,
      [s.placement.at.x / 10_000, s.placement.at.y / 10_000],
    ]),
  );
}

/**
 * Where nothing at the run's end can slide, what lies ahead of the label is pushed the way it
 * reads, a gap opened across the sheet: on vme-wren's power-supply-3 sheet 5VPG runs from the
 * regulator's PG pin to R120, in a column with L1, R210 and the 5VREG rail beyond them.
 */
test("a rename pushes what lies ahead of the label further along, the wires crossing the gap stretched", async () => {
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "demos/vme-wren/vme-wren",
    "/power-supply-3/5VPG",
    "5VPG5VPG",
    (file, madeRoom) => {
      expect(madeRoom).toEqual([
        "power-supply-3.kicad_sch: what lay ahead of it (R120, C296, L1, R210 and 1 more parts; 21 items in all) pushed 5.08 mm right, the 4 wires crossing the gap made longer or shorter to match",
      ]);
      const at = places(file);
      // The column beyond the label moved as one, 5.08 mm right of where it was drawn.
      expect([at.R120, at.L1, at.R210, at.R211, at.C296]).toEqual([
        [321.31, 144.78],
        [313.69, 137.16],
        [328.93, 149.86],
        [314.96, 157.48],
        [337.82, 144.78],
      ]);
      // The regulator whose pin the run leaves stays where it was.
      expect(at.IC32).toEqual([278.13, 134.62]);
    },
    "power-supply-3.kicad_sch",
  );
  expect(ercAfter).toEqual(ercBefore);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * A push takes the designer's drawing along: on pico2-ice's top sheet SDA_GPIO2 reads left from
 * a connector's pin towards the brackets and captions that group its pins. The brackets in the
 * band pushed left move with their captions; the one above them, clear of it, stays.
 */
test("a rename pushes drawn brackets and captions along with the rest, leaving those outside the band", async () => {
  // Each caption's x by its text and y (mm).
  const captions = (file: SchematicFile) =>
    Object.fromEntries(
      children(file.doc.root, "text").map((t) => {
        const at = child(t, "at")!;
        return [`${text(t, 1)} ${text(at, 2)}`, Number(text(at, 1))];
      }),
    );
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "fixtures/pico2-ice-rev2",
    "/SDA_GPIO2",
    "SDA_GPIO2SDA_GPIO2",
    (file, madeRoom) => {
      expect(madeRoom).toEqual(["pico2-ice.kicad_sch: what lay ahead of it (9 items in all) pushed 10.16 mm left"]);
      const at = captions(file);
      expect([at["iCE PMOD 78.105"], at["BOOT|ADC 88.392"], at["iCE Misc 65.405"]]).toEqual([375.92, 372.618, 386.08]);
    },
    undefined,
    // The net's label at J2 goes out on a new stub: the stub, the wire it leaves split in two, a junction.
    [0, 0, 2, 1],
  );
  expect(ercAfter).toEqual(ercBefore);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * Where what lies ahead cannot go, what lies behind the label is pulled back, the label with it:
 * on RoyalBlue54L-Feather's Debugger sheet UART_RX_NRF52 sits on level shifter U6's pin A2, R1
 * and its wiring just beyond, and pushing them along runs R8's Value into U5's no-connect
 * flags. U6 goes left with its decoupling capacitors, the wires from its other side stretched.
 */
test("a rename pulls what lies behind the label back, the label with it, when what lies ahead cannot move", async () => {
  const to = "UART_RX_NRF52UART_RX_NRF52";
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "demos/royalblue54L_feather/RoyalBlue54L-Feather",
    "/Debugger/UART_RX_NRF52",
    to,
    (file, madeRoom) => {
      expect(madeRoom).toEqual([
        "Debugger.kicad_sch: what lay behind it (U6, C25, C24; 42 items in all) pulled back, the label with it, 12.70 mm left, the 4 wires crossing the gap made longer or shorter to match",
      ]);
      const at = places(file);
      expect([at.U6, at.C24, at.C25, at.R1]).toEqual([
        [82.55, 120.65],
        [76.2, 99.06],
        [88.9, 99.06],
        [127, 115.57],
      ]);
      // The label went with U6's pin.
      expect(file.labels.filter((l) => l.text === to).map((l) => [l.at.x / 10_000, l.at.y / 10_000])).toContainEqual([
        92.71, 118.11,
      ]);
    },
    "Debugger.kicad_sch",
  );
  expect(ercAfter).toEqual(ercBefore);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * The net's labels on one sheet make room one after another, each clear of where those before it
 * went and of what they moved: on vme-wren's io_driver_32x sheet I_IOEXP_RCLK is labelled in
 * front of each of four bank sheets, and the first label's push moves all four sheets along.
 */
test("the labels of a net on one sheet make room in turn, each clear of where the others went and what they moved", async () => {
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "demos/vme-wren/vme-wren",
    "/io_drivers_fp/I_IOEXP_RCLK",
    `I_IOEXP_RCLK${"X".repeat(12)}`,
    (file, madeRoom) => {
      expect(madeRoom).toEqual([
        "io_driver_32x.kicad_sch: what lay ahead of it (sheet bank0, sheet bank1, sheet bank2, sheet bank3; 20 items in all) pushed 15.24 mm right, the 27 wires crossing the gap made longer or shorter to match",
      ]);
      expect(file.labels.filter((l) => l.text === `I_IOEXP_RCLK${"X".repeat(12)}`).length).toBe(4);
    },
    "io_driver_32x.kicad_sch",
  );
  // Nothing new; one fewer dangling wire end: a label that moved to its wire's free end now holds it.
  for (const [kind, count] of Object.entries(ercAfter)) expect(count).toBeLessThanOrEqual(ercBefore[kind] ?? 0);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * A free end that carries a no-connect flag is lengthened with the flag going out on it: on
 * Glasgow's top sheet SWSH runs down from the switch to a flag, between C89 and a GND symbol.
 */
test("a rename carries the no-connect flag at its wire's free end out, the wire lengthened with it", async () => {
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "corpus/glasgow-revc3",
    "/SWSH",
    "SWSHXXXX",
    (file, madeRoom) => {
      expect(madeRoom).toEqual([
        "glasgow.kicad_sch: the no-connect flag at (213.36, 109.22) went out 8.89 mm down with its wire's end",
      ]);
      const moved = { x: 2_133_600, y: 1_181_100 };
      expect(file.noConnects.filter((n) => n.at.x === moved.x && n.at.y === moved.y)).toHaveLength(1);
      expect(file.wires.some((w) => [w.a, w.b].some((p) => p.x === moved.x && p.y === moved.y))).toBe(true);
    },
  );
  expect(ercAfter).toEqual(ercBefore);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * A label joins every wire through its anchor, so it must not slide onto a point where another
 * net's wire crosses its own: on pico-ice, PICO_PMOD_A1's short run from J2's pin 23 is crossed
 * by a vertical wire 2.54 mm along it, where a slide once put the longer name and merged the net
 * into GND (the netlist check refused the rename). It now goes where it joins nothing.
 */
test("a renamed label does not slide onto another net's wire crossing its own", async () => {
  const crossingAt = { x: 3_340_100, y: 1_308_100 };
  const { ercBefore, ercAfter, crossing } = await renameOnCopy(
    "fixtures/pico-ice-rev3",
    "/PICO_PMOD_A1",
    "PICO_PMOD_A1_Q",
    (file) => {
      const label = file.labels.find((l) => l.text === "PICO_PMOD_A1_Q")!;
      expect(label.at).not.toEqual(crossingAt);
      expect(file.wires.filter((w) => onSegment(label.at, w.a, w.b, 0))).toHaveLength(1);
    },
  );
  expect(ercAfter).toEqual(ercBefore);
  expect(crossing).toEqual([]);
}, 120_000);

/**
 * Nor does a pull carry it there: on Glasgow's IO buffer sheet P1 reads towards the connector
 * along a row crossed a grid step behind it by the P4 to P7 wires, with no junction. Pulled back,
 * the label would stand on P7's wire and join the two nets; the rename is refused as finding no
 * room, saying what each way ran into, not as a change of the nets.
 */
test("a label pulled back with what lies behind it does not land where another net's wire crosses its own", async () => {
  const copy = await copyCorpusProject(everyProject().find((p) => p.id === "corpus/glasgow-revc3")!);
  const root = copy.schematic!;
  const editor = SchematicEditor.open(root, await openLibraries(dirname(root)));
  let refused: CopperheadError | undefined;
  try {
    editor.renameNet("/IO_Banks/IO_Buffer_A/P1", "P1XX");
  } catch (e) {
    refused = e as CopperheadError;
  }
  expect(refused?.code).toBe("edit_conflict");
  expect(refused?.message).toContain("Tried, least change first");
  expect(refused?.message).not.toContain("would change more than that net");
}, 120_000);
