/**
 * What `do` draws reads like the designer drew it, on every project of the open-hardware corpus
 * and on three KiCad demos (pic_programmer's capacitor symbol was converted from a pre-KiCad 6
 * library and shows its Footprint field): one scripted session per project, from one template
 * (its supply net and its capacitor to copy), adds a decoupling capacitor connected to the
 * supply and ground, and an LED with its series resistor, through the compiled binary with real
 * kicad-cli (the sheets only: the copies carry no board, since a run that adds parts to a board
 * must lay them out, which the board tests judge).
 * Each run commits, and in the committed sheets (boxes from the saved tree, not the
 * placement engine):
 *
 * - no field, label or power symbol of the new parts overlaps any other item;
 * - every field of every new symbol is upright or reads bottom to top;
 * - Footprint and Datasheet are hidden unless the `like` example shows them;
 * - the LED and its resistor are within 10 mm and joined by a wire.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { listComponents, type Component } from "../../src/kicad/netlist/components.ts";
import { placePoint } from "../../src/kicad/schematic/geometry.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { unitPins } from "../../src/kicad/schematic/model/symbols.ts";
import { child, children, flag, num, parseSexpr, text } from "../../src/kicad/sexpr/index.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { corpusProjects, demoProjects, type CorpusProject } from "../support/corpora.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { git } from "../repo/git-repo.ts";
import { initialisedCorpusRepo, ISOLATED_ENV } from "../support/repos.ts";
import { drawnItems, gap, overlaps, wiredTogether, type DrawnItem } from "../support/sheet-boxes.ts";
import { requireBinary, runBinary } from "./binary.ts";

afterAll(cleanupTempDirs);
beforeAll(async () => {
  requireBinary();
  await requireKicadCli();
}, 60_000);

/** A test waits for its own run and, at worst, the one before it in its lane. */
const TIMEOUT = 400_000;
/** The LED and its resistor sit this close (gap between their drawings, mm). */
const PARTNERS_MM = 10;

interface Case {
  id: string;
  /** The supply net and the ground net, as the design names them. */
  supply: string;
  ground: string;
  /** A capacitor of the design to copy (`like`), else a new Device:C. */
  like?: string;
  /** The supply is new to the design: a PWR_FLAG drives it. */
  newSupply?: boolean;
}

const CASES: Case[] = [
  { id: "corpus/antenna-eval", supply: "+3V3", ground: "GND", newSupply: true },
  { id: "corpus/bms-c1", supply: "+3V3", ground: "GND" },
  { id: "corpus/emf-hexpansion", supply: "/3V3", ground: "/GND" },
  { id: "corpus/glasgow-revc3", supply: "+3V3", ground: "GND", like: "C1" },
  { id: "corpus/rp2040-designguide", supply: "+3V3", ground: "GND" },
  { id: "corpus/rvpc-revb", supply: "+5V", ground: "GND", like: "C1" },
  { id: "corpus/sweep-half-swept", supply: "vcc", ground: "gnd" },
  { id: "corpus/uext-esp32-c3", supply: "+3V3", ground: "GND", like: "C1" },
  { id: "demos/pic_programmer/pic_programmer", supply: "VCC", ground: "GND", like: "C5" },
  { id: "demos/flat_hierarchy/flat_hierarchy", supply: "VCC", ground: "GND" },
  { id: "demos/video/video", supply: "+5V", ground: "GND" },
];

const NEW = { cap: "C900", led: "D900", resistor: "R900" };

/** The recorded session for one project: propose, add the three parts, finish. */
function session(c: Case): unknown {
  // A stock footprint: the example's may be in no library table, and without a board there is
  // no copy of it to take (the symbol and its fields still come from the example).
  const cap = c.like
    ? { like: c.like, footprint: "Capacitor_SMD:C_0603_1608Metric" }
    : { lib_id: "Device:C", value: "100n", footprint: "Capacitor_SMD:C_0603_1608Metric" };
  const call = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input });
  const adds = [
    call("t2", "add_component", { ...cap, ref: NEW.cap, connect: { "1": c.supply, "2": c.ground } }),
    call("t3", "add_component", {
      lib_id: "Device:LED",
      value: "LED",
      footprint: "LED_SMD:LED_0603_1608Metric",
      ref: NEW.led,
      connect: { A: c.supply, K: "LED_K" },
    }),
    call("t4", "add_component", {
      lib_id: "Device:R",
      value: "1k",
      footprint: "Resistor_SMD:R_0603_1608Metric",
      ref: NEW.resistor,
      near: NEW.led,
      connect: { "1": "LED_K", "2": c.ground },
    }),
    ...(c.newSupply
      ? [call("t5", "add_component", { lib_id: "power:PWR_FLAG", ref: "#FLG0900", connect: { "1": c.supply } })]
      : []),
  ];
  return {
    schema: "copperhead.session/1",
    model: "scripted",
    description: `Adds a decoupling capacitor on ${c.supply} and a power-on LED with its series resistor.`,
    turns: [
      {
        content: [
          call("t1", "propose_change", {
            title: "Add a decoupling capacitor and a power-on LED",
            why: `${c.supply} needs local decoupling, and nothing shows that the board is powered.`,
            changes: [
              `add ${NEW.cap} from ${c.supply} to ${c.ground}`,
              `add ${NEW.led} and ${NEW.resistor} in series from ${c.supply} to ${c.ground}`,
            ],
            requirements_touched: [],
            verification: "No new ERC error; the new parts wait for layout.",
            refs: c.like ? [c.like] : [],
            nets: c.newSupply ? [c.ground] : [c.supply, c.ground],
            new_refs: [NEW.cap, NEW.led, NEW.resistor],
            new_nets: ["LED_K", ...(c.newSupply ? [c.supply] : [])],
          }),
        ],
      },
      { content: adds },
      { content: [call("t7", "finish", { summary: `Added ${NEW.cap}, ${NEW.led} and ${NEW.resistor}.` })] },
    ],
  };
}

function project(id: string): CorpusProject {
  const found = [...corpusProjects(), ...demoProjects()].find((p) => p.id === id);
  if (!found) throw new Error(`${id} is missing from the corpora`);
  return found;
}

/** A placed field of the saved sheet: its name, file angle and visibility. */
interface SavedField {
  name: string;
  angle: number;
  hidden: boolean;
}

function savedFields(file: string, uuid: string): SavedField[] {
  const root = parseSexpr(readFileSync(file, "utf8")).root;
  const symbol = children(root, "symbol").find((s) => text(child(s, "uuid")!, 1) === uuid)!;
  return children(symbol, "property").map((p) => {
    const effects = child(p, "effects");
    return {
      name: text(p, 1)!,
      angle: num(child(p, "at")!, 3) ?? 0,
      hidden: Boolean(flag(p, "hide") || (effects && flag(effects, "hide"))),
    };
  });
}

/** Fields, labels and power symbols of `fresh` that overlap another item (their own part's drawing and the wire a label sits on aside). */
function crowding(fresh: DrawnItem[], all: DrawnItem[]): string[] {
  const problems: string[] = [];
  for (const item of fresh.filter((i) => i.kind === "field" || i.kind === "label" || i.symbol?.power)) {
    for (const other of all) {
      if (other === item || (other.uuid === item.uuid && other.kind === "symbol")) continue;
      if (item.kind === "label" && other.kind === "wire") continue;
      if (item.symbol?.power && other.kind === "wire") continue;
      // A power symbol's own text sits where its library puts it: the design's own symbol is reused
      // (video's +5V draws its Value 0.1 mm into its body, as every +5V on that sheet does).
      if (item.symbol?.power && other.uuid === item.uuid) continue;
      if (overlaps(item.box, other.box))
        problems.push(
          `${item.kind} ${JSON.stringify(item.box)} over ${other.kind}${other.symbol ? ` ${other.symbol.reference}` : ""} ${JSON.stringify(other.box)}`,
        );
    }
  }
  return problems;
}

/** A pin's tip on the sheet, mm. */
function tip(component: Component, pin: string): [number, number] {
  const symbol = component.symbols[0]!;
  const at = placePoint(
    unitPins(symbol, symbol.unit).find((p) => p.number === pin || p.name === pin)!.at,
    symbol.placement,
  );
  return [at.x / 10_000, at.y / 10_000];
}

/** What one project's run left: the sheets before, what the example shows, the binary's output. */
interface Outcome {
  root: string;
  oldUuids: Set<string>;
  exampleShows?: Map<string, boolean>;
  run: { stdout: string; stderr: string };
}

/** Copies the project into a fresh repo, notes what was drawn, and runs the session through the binary. */
async function runCase(c: Case): Promise<Outcome> {
  const repo = await initialisedCorpusRepo(project(c.id));
  // The sheets only: a run that adds parts to a project with a board must lay them out there,
  // which the board tests judge, so these copies carry no board.
  const board = discoverProject(repo).board;
  if (board) {
    await git(repo, "rm", "--quiet", board);
    await git(repo, "commit", "--quiet", "-m", "the sheets only");
  }
  const root = discoverProject(repo).schematic;
  const before = loadSchematicProject(root);
  const oldUuids = new Set([...before.files.values()].flatMap((f) => drawnItems(f.path).map((i) => i.uuid)));
  const example = c.like ? listComponents(before).find((x) => x.ref === c.like)! : undefined;
  const exampleShows = example
    ? new Map(savedFields(example.file, example.symbols[0]!.uuid).map((f) => [f.name, !f.hidden]))
    : undefined;
  const file = join(await makeTempDir(), "session.json");
  writeFileSync(file, JSON.stringify(session(c)));
  const run = await runBinary(
    ["do", "add a decoupling capacitor and a power-on LED", "--model", `replay:${file}`, "--json", "--repo", repo],
    { env: ISOLATED_ENV },
  );
  return { root, oldUuids, exampleShows, run };
}

/** Runs two projects at a time (each run is mostly one kicad-cli process), started once for the whole file. */
const outcomes = new Map<string, Promise<Outcome>>();
beforeAll(() => {
  const lanes: Promise<unknown>[] = [Promise.resolve(), Promise.resolve()];
  CASES.forEach((c, i) => {
    const run = lanes[i % lanes.length]!.then(() => runCase(c));
    lanes[i % lanes.length] = run.catch(() => undefined);
    outcomes.set(c.id, run);
  });
});

describe("do: a capacitor, and an LED with its resistor, drawn as a designer would", () => {
  for (const c of CASES) {
    test(
      c.id,
      async () => {
        const { root, oldUuids, exampleShows, run } = await outcomes.get(c.id)!;
        const summary = JSON.parse(run.stdout || "{}");
        expect(summary.status, `${run.stderr}\n${JSON.stringify(summary.verification?.newFindings)}`).toBe("committed");

        const after = loadSchematicProject(root);
        const components = listComponents(after);
        const part = (ref: string) => components.find((x) => x.ref === ref)!;
        const problems: string[] = [];
        for (const ref of [NEW.cap, NEW.led, NEW.resistor]) {
          const component = part(ref);
          const items = drawnItems(component.file, component.sheetPath);
          const fresh = items.filter((i) => !oldUuids.has(i.uuid));
          problems.push(...crowding(fresh, items).map((p) => `${component.sheet}: ${p}`));
          for (const field of savedFields(component.file, component.symbols[0]!.uuid)) {
            if (!field.hidden && field.angle !== 0 && field.angle !== 90)
              problems.push(`${ref} ${field.name} at angle ${field.angle}`);
            if (field.name === "Footprint" || field.name === "Datasheet") {
              const shown = ref === NEW.cap && exampleShows ? (exampleShows.get(field.name) ?? false) : false;
              if (!field.hidden !== shown)
                problems.push(
                  `${ref} ${field.name} ${field.hidden ? "hidden" : "shown"}, the example's is ${shown ? "shown" : "hidden"}`,
                );
            }
          }
        }
        expect([...new Set(problems)]).toEqual([]);

        const led = part(NEW.led);
        const resistor = part(NEW.resistor);
        expect(resistor.file).toBe(led.file);
        const boxes = drawnItems(led.file, led.sheetPath).filter((i) => i.kind === "symbol");
        const box = (component: Component) => boxes.find((i) => i.uuid === component.symbols[0]!.uuid)!.box;
        const apart = gap(box(led), box(resistor));
        expect(apart).toBeLessThanOrEqual(PARTNERS_MM);
        expect(wiredTogether(led.file, tip(led, "K"), tip(resistor, "1"))).toBe(true);
        console.log(
          `${c.id}: committed; ${NEW.led}–${NEW.resistor} ${apart.toFixed(2)} mm apart, joined by a wire on ${led.sheet}`,
        );
      },
      TIMEOUT,
    );
  }
});
