/**
 * New findings are new things: a finding is matched to the baseline by its kind, its objects
 * and their place, never by its rank among violations of one kind. The reports are kicad-cli's
 * own DRC of the custom_pads_test demo, and variations of it in the same schema (KiCad's
 * violations reordered, dropped, or repeated with other measurements between the same objects).
 */
import { beforeAll, afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { evaluateGate, verificationLine } from "../../src/run/gate.ts";
import { compareWithBaseline, reportAgainstBaseline } from "../../src/checks/baseline.ts";
import { checkDrc } from "../../src/checks/drc.ts";
import { indexBoard } from "../../src/checks/kicad-items.ts";
import type { CheckReport, Finding } from "../../src/checks/types.ts";
import { loadDesign, type Design } from "../../src/design/design.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { parseDrcReport, type Violation } from "../../src/kicad/cli/report.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { copyCorpusProject, demoProjects } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";

const PAD2_FAMILY = "drc:clearance:teardrop:/PAD2@F.Cu+zone:GND@F.Cu";

let design: Design;
let items: ReturnType<typeof indexBoard>;
/** kicad-cli's DRC violations of the demo as it ships. */
let shipped: Violation[];

beforeAll(async () => {
  const cli = await requireKicadCli();
  const demo = demoProjects().find((p) => p.id === "demos/custom_pads_test/custom_pads_test");
  if (!demo) throw new Error("the KiCad demo custom_pads_test is not installed");
  const project = await copyCorpusProject(demo);
  design = loadDesign(discoverProject(project.root));
  const board = design.project.board!;
  const out = join(await makeTempDir(), "drc.json");
  const run = Bun.spawnSync([cli.path, "pcb", "drc", "--format", "json", "--severity-all", "-o", out, board]);
  if (run.exitCode !== 0) throw new Error(`kicad-cli pcb drc failed: ${run.stderr.toString()}`);
  shipped = parseDrcReport(readFileSync(out, "utf8"), out).violations;
  items = indexBoard(Board.load(board), board);
}, 120_000);
afterAll(cleanupTempDirs);

function checked(violations: Violation[]): CheckReport {
  return reportOf(checkDrc({ ...parseDrcReport(JSON.stringify({ violations }), "drc.json") }, design, items, false));
}

/** A check report holding one check's result. */
function reportOf(check: CheckReport["checks"][number]): CheckReport {
  return {
    schema: "copperhead.check/1",
    ok: true,
    project: "p.kicad_pro",
    kicad: { version: "9.0.8" },
    strict: false,
    fab: false,
    checks: [check],
    counts: { error: 0, warning: 0, info: 0 },
  };
}

/** The demo's two clearance violations between the GND zone and a /PAD2 teardrop (two teardrops, one family). */
const pad2 = () =>
  shipped.filter((v) => v.type === "clearance" && v.items.some((i) => i.description.includes("[/PAD2]")));
/** A violation between the same objects as `like`, measured `actual`: one more sliver between them. */
const measured = (like: Violation, actual: string): Violation => ({
  ...like,
  description: `Clearance violation (zone clearance 0.5000 mm; actual ${actual} mm)`,
});

/** What is new against `before`, as the run's gate, `check --baseline` and the Verification line each judge it. */
function judged(before: Violation[], after: Violation[]) {
  const [base, now] = [checked(before), checked(after)];
  const gate = evaluateGate(base, now, false).newFindings;
  const against = reportAgainstBaseline(now, base, { ref: "HEAD", commit: "0".repeat(40) });
  const checkNew = against.checks.flatMap((c) => c.findings).filter((f) => f.baselineState === "new");
  const line = verificationLine(now, base);
  return {
    gate,
    checkNew,
    counts: against.baseline!.counts,
    line,
    absent: compareWithBaseline(base, now, false).absent,
  };
}

/** A report of ERC findings alone. */
const ercReport = (findings: Finding[]) => reportOf({ id: "erc", status: "warn", summary: "", findings });

const messages = (findings: Finding[]) => findings.map((f) => f.message.replace(/:.*/, ""));

describe("matching findings to the baseline", () => {
  test("the demo's report carries a family of two between the same kinds of objects, keyed …#2", () => {
    const keys = checked(shipped).checks[0]!.findings.map((f) => f.key);
    expect(keys).toContain(PAD2_FAMILY);
    expect(keys).toContain(`${PAD2_FAMILY}#2`);
  });

  test("a reshuffle is nothing new: the same violations in another order", () => {
    const { gate, checkNew, counts, absent, line } = judged(shipped, [...shipped].reverse());
    expect(gate).toEqual([]);
    expect(checkNew).toEqual([]);
    expect(absent).toEqual([]);
    expect(counts).toEqual({ new: 0, unchanged: 4, absent: 0 });
    expect(line).toContain("DRC 3 errors, 1 warning (baseline, none new)");
  });

  test("a family that loses one violation and gains a different one has one new finding", () => {
    const [a, b] = pad2();
    const others = shipped.filter((v) => !pad2().includes(v));
    // The family had the violation at teardrop a; now it has the one at teardrop b instead.
    const { gate, checkNew, counts, absent } = judged([...others, a!], [...others, b!]);
    expect(gate.map((f) => f.items)).toEqual([[...b!.items.map((i) => i.uuid)].sort()]);
    expect(checkNew.map((f) => f.items)).toEqual(gate.map((f) => f.items));
    expect(absent.map((f) => f.items)).toEqual([[...a!.items.map((i) => i.uuid)].sort()]);
    expect(counts).toEqual({ new: 1, unchanged: 2, absent: 1 });
  });

  test("slivers between the same two objects, one measured anew, are the ones they were; one more is one new finding", () => {
    const [a] = pad2();
    const family = ["0.4901", "0.4902", "0.4903"].map((actual) => measured(a!, actual));
    // Their objects and place are the same: what tells them apart is KiCad's measure, which a
    // refill nudges.
    const now = [family[0]!, family[2]!, measured(a!, "0.4960")];
    expect(judged(family, now).counts).toEqual({ new: 0, unchanged: 3, absent: 0 });
    const { gate, counts } = judged(family, [...now, measured(a!, "0.4970")]);
    expect(gate.length).toBe(1);
    expect(counts).toEqual({ new: 1, unchanged: 3, absent: 0 });
  });

  test("a zone's narrow connections measured anew by a refill are the ones they were; three more are three new", () => {
    // As multichannel's back GND pour reports its four necks, each at the zone's own position:
    // after a capacitor's refill they measure 0.2590 mm, not 0.2490 mm; after an LED's, there
    // are seven.
    const zone = pad2()[0]!.items.find((i) => i.description.startsWith("Zone"))!;
    const neck = (actual: string): Violation => ({
      type: "connection_width",
      severity: "warning",
      excluded: false,
      description: `Copper connection too narrow (board setup constraints minimum connection width 0.3000 mm; actual ${actual} mm) (F.Cu)`,
      items: [zone],
    });
    const four = (actual: string) => Array.from({ length: 4 }, () => neck(actual));
    const base = [...shipped, ...four("0.2490")];
    const refilled = judged(base, [...shipped, ...four("0.2590")]);
    expect(refilled.gate).toEqual([]);
    expect(refilled.counts).toEqual({ new: 0, unchanged: 8, absent: 0 });
    expect(refilled.line).toContain("(baseline, none new)");
    const grown = judged(base, [...shipped, ...four("0.2590"), ...Array.from({ length: 3 }, () => neck("0.2510"))]);
    expect(grown.counts).toEqual({ new: 3, unchanged: 8, absent: 0 });
  });

  test("a family of identical slivers grows from 7 to 8 while the total falls: exactly the new one is new", () => {
    const [a] = pad2();
    const family = Array.from({ length: 7 }, (_, i) => measured(a!, `0.490${i + 1}`));
    const before = [...shipped, ...family];
    // The new sliver measures least, so it ranks first in its family and every other one's index shifts.
    const fresh = measured(a!, "0.4900");
    const after = [
      fresh,
      ...[...family].reverse(),
      ...shipped.filter((v) => v.type === "clearance" && !v.items.some((i) => i.description.includes("[/PAD1]"))),
    ];
    expect(after.length).toBe(before.length - 1);
    const { gate, checkNew, counts, line } = judged(before, after);
    expect(messages(gate)).toEqual([fresh.description]);
    expect(messages(checkNew)).toEqual([fresh.description]);
    expect(counts).toEqual({ new: 1, unchanged: 9, absent: 2 });
    expect(line).toContain("DRC 10 errors (baseline, 1 new)");
  });

  test("a violation whose objects moved is the one it was", () => {
    const moved = shipped.map((v) => ({
      ...v,
      items: v.items.map((i) => ({ ...i, pos: { x: i.pos!.x + 5, y: i.pos!.y - 2 } })),
    }));
    expect(judged(shipped, moved).gate).toEqual([]);
  });

  test("a violation KiCad reports naming another object of the same kind, at the same place, is the one it was", () => {
    // As Glasgow's "net not a bus member" warnings name either of two bus segments meeting at
    // the entry, from one ERC run to the next.
    const [a, b] = pad2();
    const others = shipped.filter((v) => !pad2().includes(v));
    const teardrop = (v: Violation) => v.items.find((i) => i.description.startsWith("Teardrop"))!;
    const renamed = { ...a!, items: a!.items.map((i) => (i === teardrop(a!) ? { ...i, uuid: teardrop(b!).uuid } : i)) };
    expect(teardrop(renamed).uuid).not.toBe(teardrop(a!).uuid);
    expect(judged([...others, a!], [...others, renamed]).gate).toEqual([]);
    // Another message there, naming the same objects, is another violation.
    const other = { ...renamed, description: "Clearance violation (zone clearance 0.5000 mm; actual 0.1000 mm)" };
    expect(messages(judged([...others, a!], [...others, a!, other]).gate)).toEqual([other.description]);
  });

  test("every finding carries its place: layer and position of its first object", () => {
    const findings = checked(shipped).checks[0]!.findings;
    const mismatch = findings.find((f) => f.rule === "lib_footprint_mismatch")!;
    expect(mismatch.location).toMatchObject({ ref: "AE2", x: 166.3, y: 72.5 });
    for (const f of findings.filter((f) => f.rule === "clearance"))
      expect(f.location).toMatchObject({ layer: "F.Cu", x: 62.992, y: 48.768 });
  });

  test("a silkscreen finding names the part whose field it names, keyed as KiCad describes the field", () => {
    // R2's Reference field, by the uuid the board gives it: the gate asks a run that placed R2 about it.
    const silk: Violation = {
      type: "silk_over_copper",
      severity: "warning",
      description: "Silkscreen clipped by solder mask",
      excluded: false,
      items: [
        { description: "Reference field of R2", uuid: "de2100d3-55b6-425b-a27b-a1a4a76229bc", pos: { x: 1, y: 2 } },
      ],
    };
    const [finding] = checked([silk]).checks[0]!.findings;
    expect(finding).toMatchObject({ refs: ["R2"], key: "drc:silk_over_copper:Reference field of R2" });
    const own = evaluateGate(checked([]), checked([silk]), false, new Map(), undefined, {
      placed: new Set(["R2"]),
      decisions: [],
    });
    expect(own.blocking.map((f) => f.key)).toEqual([finding!.key]);
  });
});

describe("a finding KiCad makes once per net", () => {
  /** ERC's report of one net's bus warning, at the entry `entry` (KiCad names either of two). */
  const busWarning = (entry: string, y: number, bus = "Vertical Bus, length 0.0254 mm"): Finding => ({
    check: "erc",
    rule: "net_not_bus_member",
    severity: "warning",
    message: `Net /OE is graphically connected to bus /<NO NET> but is not a member of that bus: Bus to Wire Entry; ${bus}`,
    key: "erc:net_not_bus_member:bus+bus_entry",
    location: { file: "glasgow.kicad_sch", sheet: "/", x: 196.85, y },
    items: [entry, "268fc805-00f2-4341-ab04-09263735d834"].sort(),
  });

  test("is the one it was, at whichever of the net's objects it is reported", () => {
    const before = ercReport([busWarning("0e7fcd98-9365-42b7-9aa3-28dcec02a053", 74.93)]);
    const after = ercReport([
      busWarning("1bb895ef-6b7c-494d-84a3-be294c9457b2", 125.73, "Vertical Bus, length 27.94 mm"),
    ]);
    expect(compareWithBaseline(before, after, true).failing).toEqual([]);
    // Another net's is new.
    const other = {
      ...busWarning("1bb895ef-6b7c-494d-84a3-be294c9457b2", 125.73),
      message: "Net /WR is graphically connected to bus /<NO NET> but is not a member of that bus: Bus to Wire Entry",
    };
    expect(compareWithBaseline(before, ercReport([other]), true).failing.map((f) => f.message)).toEqual([
      other.message,
    ]);
  });
});

describe("a symbol placed from a library symbol ERC already finds differing", () => {
  const mismatch = (ref: string, symbol: string): Finding => ({
    check: "erc",
    rule: "lib_symbol_mismatch",
    severity: "warning",
    message: `Symbol '${symbol}' doesn't match copy in library 'power': Symbol ${ref} [${symbol}]`,
    key: `erc:lib_symbol_mismatch:${ref}`,
    items: [`uuid-${ref}`],
    refs: [ref],
  });

  test("is no new finding: the difference is the embedded symbol's, which the baseline reports", () => {
    const { current } = compareWithBaseline(
      ercReport([mismatch("#PWR01", "+3V3")]),
      ercReport([mismatch("#PWR01", "+3V3"), mismatch("#PWR07", "+3V3")]),
      true,
    );
    expect(current.map((f) => [f.refs, f.baselineState])).toEqual([
      [["#PWR01"], "unchanged"],
      [["#PWR07"], "unchanged"],
    ]);
  });

  test("a symbol the baseline does not find differing is new", () => {
    const { current, failing } = compareWithBaseline(
      ercReport([mismatch("#PWR01", "+3V3")]),
      ercReport([mismatch("#PWR01", "+3V3"), mismatch("#PWR08", "GND")]),
      true,
    );
    expect(current.map((f) => f.baselineState)).toEqual(["unchanged", "new"]);
    expect(failing.map((f) => f.refs)).toEqual([["#PWR08"]]);
  });
});

describe("a library the tables lack", () => {
  const missing = (rule: string, ref: string, library: string): Finding => ({
    check: "erc",
    rule,
    severity: "warning",
    message: `The current configuration does not include the ${rule === "footprint_link_issues" ? "footprint" : "symbol"} library '${library}': Symbol ${ref} [X]`,
    key: `erc:${rule}:${ref}`,
    items: [`uuid-${ref}`],
    refs: [ref],
  });

  test("named for another symbol is no new finding: KiCad names a shifting set of the symbols that use it", () => {
    const { current } = compareWithBaseline(
      ercReport([
        missing("footprint_link_issues", "RST1", "OLIMEX_Buttons-FP"),
        missing("lib_symbol_issues", "#PWR057", "OLIMEX_Power"),
      ]),
      ercReport([
        missing("footprint_link_issues", "BOOT1", "OLIMEX_Buttons-FP"),
        missing("lib_symbol_issues", "#PWR0116", "OLIMEX_Power"),
      ]),
      true,
    );
    expect(current.map((f) => f.baselineState)).toEqual(["unchanged", "unchanged"]);
  });

  test("a library the baseline finds nothing missing of is new", () => {
    const { failing } = compareWithBaseline(
      ercReport([missing("lib_symbol_issues", "#PWR057", "OLIMEX_Power")]),
      ercReport([
        missing("lib_symbol_issues", "#PWR057", "OLIMEX_Power"),
        missing("lib_symbol_issues", "U9", "MyParts"),
      ]),
      true,
    );
    expect(failing.map((f) => f.refs)).toEqual([["U9"]]);
  });
});
