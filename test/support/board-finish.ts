/**
 * The acceptance of a part added by `do` to a real board: two scripted sessions per board, made
 * from a template with the board's main IC and supply ("add a 100 nF decoupling capacitor next
 * to <IC>", which the run then moves next to another load on the rail and back; then "add a
 * power LED with its series resistor between <supply> and <ground>, and remove" the capacitor),
 * run one after the other in one repo copy through the compiled binary, each judged by raw
 * `kicad-cli pcb drc` against the commit before it. One raw DRC per board state: the base, each
 * commit, and the final board with every zone refilled by KiCad, whose fills where the parts
 * are and were must equal the committed ones.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { reportedAgain, unchangedItems, type ReportedItems } from "../../src/checks/baseline.ts";
import { boardBounds } from "../../src/kicad/board/footprint/instance.ts";
import { Board, type BBox } from "../../src/kicad/board/model.ts";
import { boardZones, zoneOnLayer } from "../../src/kicad/board/zones/zones.ts";
import { runDrc, type DrcReport, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { requireBinary, runBinary } from "../e2e/binary.ts";
import { git } from "../repo/git-repo.ts";
import { decouplingNets, mainIc } from "./board-additions.ts";
import {
  around,
  copperItems,
  declaredNets,
  differingFromKicad,
  kicadRefill,
  withoutAdditions,
  type Around,
} from "./board-zones.ts";
import { insideOutline } from "./board-outline.ts";
import { printSexpr } from "../../src/kicad/sexpr/index.ts";
import { demoProjects, everyProject, type CorpusProject } from "./corpora.ts";
import { cachedParityDrc } from "./kicad-cache.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "./kicad.ts";
import { initialisedCorpusRepo, ISOLATED_ENV } from "./repos.ts";

/** Generous: vme-wren's raw DRC alone takes minutes on a loaded machine. */
const DRC_TIMEOUT = 900_000;

/**
 * A scripted session and what it does: each new part with the part it ends next to, the parts
 * it moves after the board sync (each move a `place_footprint` that must succeed) and the parts
 * of earlier runs it removes.
 */
export interface FinishSession {
  request: string;
  turns: unknown[];
  /** A part added with no `near` (beside an unannotated IC) has no anchor: it goes next to what it shares nets with. */
  added: { ref: string; anchor?: string }[];
  moves?: number;
  removed?: string[];
}

/**
 * Error violations and unconnected items, by type and the items they name (coordinates left
 * out); `reported` keeps each error's type and item uuids with its key; `isolated` counts the
 * isolated copper warnings (KiCad names only the zone, so they are counted, not keyed);
 * `warnings` keys each warning as errors are.
 */
export function drcKeys(report: DrcReport): {
  errors: string[];
  unconnected: string[];
  reported: (ReportedItems & { key: string })[];
  isolated: number;
  warnings: string[];
} {
  const key = (v: DrcReport["violations"][number]) =>
    `${v.type}: ${v.items
      .map((i) => i.description.replace(/,\s*(length|width)\s+[^,]*/g, ""))
      .sort()
      .join(" | ")}`;
  const errors = report.violations.filter((v) => v.severity === "error" && !v.excluded);
  return {
    errors: errors.map(key).sort(),
    unconnected: report.unconnected_items
      .filter((v) => !v.excluded)
      .map(key)
      .sort(),
    reported: errors.map((v) => ({ key: key(v), check: "drc", rule: v.type, items: v.items.map((i) => i.uuid) })),
    isolated: report.violations.filter((v) => v.type === "isolated_copper" && !v.excluded).length,
    warnings: report.violations
      .filter((v) => v.severity === "warning" && !v.excluded)
      .map(key)
      .sort(),
  };
}

/**
 * The errors of `after` not in `before`, but for those KiCad reports again with another
 * partner between items the change left as they were (`reportedAgain`, as the gate judges).
 */
export function addedErrors(
  after: { drc: ReturnType<typeof drcKeys>; bytes: Buffer },
  before: { drc: ReturnType<typeof drcKeys>; bytes: Buffer },
): string[] {
  const unchanged = unchangedItems(() => ({
    before: Board.parse(before.bytes),
    after: Board.parse(after.bytes),
    sameRules: true,
  }));
  const again = after.drc.reported.filter((r) => reportedAgain(r, before.drc.reported, unchanged)).map((r) => r.key);
  return addedKeys(addedKeys(after.drc.errors, before.drc.errors), again);
}

/** The keys of `after` not in `before`, counting repeats. */
export function addedKeys(after: string[], before: string[]): string[] {
  const left = [...before];
  return after.filter((k) => {
    const i = left.indexOf(k);
    if (i < 0) return true;
    left.splice(i, 1);
    return false;
  });
}

/**
 * The unconnected items of `after` the change added. KiCad reports one item per pair of islands
 * of a net, naming whichever items of the two lie nearest, so an old one can come back naming
 * other items (tinytapeout's J15 shield pad, then a track beside it): what counts is how many a
 * net has. For each net with more than before, its items not in `before`, those naming
 * `refs` (the new parts) first.
 */
export function addedUnconnected(after: string[], before: string[], refs: string[]): string[] {
  const names = (k: string) => refs.some((ref) => k.includes(`of ${ref}`));
  return grownGroups(
    after,
    before,
    (key) => /\[([^\]]*)\]/.exec(key)?.[1] ?? key,
    (a, b) => Number(names(b)) - Number(names(a)),
  );
}

/**
 * The warnings of `after` by which a type grew: one more of a type is one the change made, while
 * an old one may come back naming other items. For each type with more than before, its
 * warnings not in `before`.
 */
export function grownWarnings(after: string[], before: string[]): string[] {
  return grownGroups(after, before, (key) => key.slice(0, key.indexOf(":")));
}

/**
 * The keys of `after` by which a group (`groupOf`) grew: for each group with more keys than in
 * `before`, as many of its keys not in `before`, in `order`.
 */
function grownGroups(
  after: string[],
  before: string[],
  groupOf: (key: string) => string,
  order?: (a: string, b: string) => number,
): string[] {
  const count = (keys: string[]) =>
    keys.reduce((m, k) => m.set(groupOf(k), (m.get(groupOf(k)) ?? 0) + 1), new Map<string, number>());
  const [was, now] = [count(before), count(after)];
  return [...now].flatMap(([group, n]) => {
    const more = n - (was.get(group) ?? 0);
    if (more <= 0) return [];
    const fresh = addedKeys(
      after.filter((k) => groupOf(k) === group),
      before.filter((k) => groupOf(k) === group),
    );
    return (order ? fresh.sort(order) : fresh).slice(0, more);
  });
}

/** The first free reference `prefix` + n, n from 900. */
function freeRef(board: Board, prefix: string): string {
  const taken = new Set(board.footprints().map((f) => f.ref));
  let n = 900;
  while (taken.has(`${prefix}${n}`)) n++;
  return `${prefix}${n}`;
}

/** One tool call of a scripted turn. */
export const use = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input });
/** One scripted model turn of `content`. */
export const turn = (...content: unknown[]) => ({ content, usage: { inputTokens: 3000, outputTokens: 100 } });

/** The part a session works next to, the nets it connects to, and the size of the passives it adds. */
export interface SessionTarget {
  ic: string;
  supply: string;
  ground: string;
  /** The imperial size code of the new capacitor, LED and resistor: the board's own (default 0603). */
  size?: PassiveSize;
}

/** The chip sizes a session's passives come in, with the metric code KiCad's footprint names add. */
const PASSIVE_SIZES = { "0402": "1005", "0603": "1608" } as const;
type PassiveSize = keyof typeof PASSIVE_SIZES;

/** The library footprint of a chip part of `size`: `chip("Capacitor_SMD", "C", "0402")` is Capacitor_SMD:C_0402_1005Metric. */
const chip = (lib: string, prefix: string, size: PassiveSize = "0603") =>
  `${lib}:${prefix}_${size}_${PASSIVE_SIZES[size]}Metric`;

/**
 * Where the template does not pick what a designer would: on glasgow the part with the most
 * pads is the FPGA, whose sheet has no free room beside its PLL supply pins for a new symbol's
 * wiring; its 3.3 V regulator's neighbourhood is where a person would add these.
 */
const TARGETS: Record<string, SessionTarget> = {
  // A passive RF board: no supply, and no named net but GND (J1's feed is KiCad's unnamed
  // Net-(J1-In), which add_component refuses to label). Both sessions put their parts on GND by
  // J1, which still tests placement among the via rings of its mounting holes, routing into the
  // pour and the refill.
  "corpus/antenna-eval": { ic: "J1", supply: "GND", ground: "GND" },
  "corpus/glasgow-revc3": { ic: "U1", supply: "+3V3", ground: "GND" },
  // The op-amp with the most pads has no ground pin and no room on its sheet beside it.
  "demos/complex_hierarchy/complex_hierarchy": { ic: "U102", supply: "VCC", ground: "GND" },
  // The ESP32-P4 (U1) sits on the back amid its fan-out with its decoupling on the front under
  // it: no free spot on either side within 33 mm, which the result says ("far"). Its 5 V buck
  // regulator U4 has room beside it, as a designer adding parts would find.
  "fixtures/esp32-p4-devkit-revc": { ic: "U4", supply: "+5V", ground: "GND" },
  // Its passives are 0402 (56 of them) on a board with no room left for an 0603: a designer adds 0402s.
  "fixtures/pico-ice-rev3": { ic: "U3", supply: "+3V3", ground: "GND", size: "0402" },
  // Its passives are 0402 too (75 of them). With 0603s the LED and its resistor find spots whose
  // pads no track can join past U3's fan-out, and their net is left for layout.
  "fixtures/pico2-ice-rev2": { ic: "U3", supply: "+3V3", ground: "GND", size: "0402" },
};

/** The board's main IC with its supply and ground (`board-additions.ts`), unless `TARGETS` names them. */
export function sessionTarget(projectId: string, board: Board): SessionTarget {
  if (TARGETS[projectId]) return TARGETS[projectId];
  const ic = mainIc(board);
  const [supply, ground] = decouplingNets(board, ic);
  return { ic: ic.ref, supply, ground };
}

/**
 * What one request asks of the model: its proposal, the `add_component` calls of each turn, and
 * what it adds. `sessionOf` scripts one or more of them as one `do` run.
 */
interface SessionPlan {
  request: string;
  proposal: {
    title: string;
    why: string;
    changes: string[];
    refs: string[];
    nets: string[];
    new_refs: string[];
    new_nets: string[];
  };
  /** The `add_component` inputs, one array per model turn. */
  adds: Record<string, unknown>[][];
  added: FinishSession["added"];
  /** `place_footprint` inputs, one turn each, after the board sync. */
  moves?: Record<string, unknown>[];
  /** Parts of an earlier run to remove, in the turn before the additions. */
  removes?: string[];
  summary: string;
}

/** The scripted session of `plans` in one run: one proposal, their additions, one board sync, `finish`. */
function sessionOf(...plans: SessionPlan[]): FinishSession {
  const merged = <K extends "changes" | "refs" | "nets" | "new_refs" | "new_nets">(key: K) => [
    ...new Set(plans.flatMap((p) => p.proposal[key])),
  ];
  let id = 0;
  const call = (name: string, input: unknown) => use(`t${++id}`, name, input);
  const removes = plans.flatMap((p) => p.removes ?? []);
  const moves = plans.flatMap((p) => p.moves ?? []);
  return {
    request: plans.map((p) => p.request).join(", and "),
    added: plans.flatMap((p) => p.added),
    moves: moves.length,
    removed: removes,
    turns: [
      turn(
        call("propose_change", {
          title: plans.map((p) => p.proposal.title).join(", and "),
          why: plans.map((p) => p.proposal.why).join(" "),
          changes: merged("changes"),
          requirements_touched: [],
          verification: "ERC and DRC show no new error; parity holds.",
          refs: merged("refs"),
          nets: merged("nets"),
          new_refs: merged("new_refs"),
          new_nets: merged("new_nets"),
        }),
      ),
      ...(removes.length > 0 ? [turn(...removes.map((ref) => call("remove_component", { ref })))] : []),
      ...plans.flatMap((p) => p.adds.map((inputs) => turn(...inputs.map((input) => call("add_component", input))))),
      turn(call("sync_board", {})),
      ...moves.map((input) => turn(call("place_footprint", input))),
      turn(call("finish", { summary: plans.map((p) => p.summary).join(" ") })),
    ],
  };
}

/**
 * Where a designer might move a decoupling capacitor to instead: the part farthest from `ic`
 * with a pad on the supply (another load on the rail), else the farthest part with two pads or
 * more. Undefined when the board has no other part.
 */
export function otherLoad(board: Board, { ic, supply }: SessionTarget): string | undefined {
  const from = board.footprint(ic)?.at ?? { x: 0, y: 0 };
  const others = board
    .footprints()
    .filter((f) => f.ref !== ic && !f.ref.startsWith("#") && !f.ref.includes("*") && f.pads.length >= 2)
    .sort((a, b) => Math.hypot(b.at.x - from.x, b.at.y - from.y) - Math.hypot(a.at.x - from.x, a.at.y - from.y));
  return (others.find((f) => f.pads.some((p) => p.net?.name === supply)) ?? others[0])?.ref;
}

/**
 * "Add a 100 nF decoupling capacitor next to <main IC>", between its supply and ground; with
 * `moveBy`, the run then moves it next to that part and back next to the IC (a designer trying
 * a spot, then changing their mind).
 */
function capacitorPlan(board: Board, { ic, supply, ground, size }: SessionTarget, moveBy?: string): SessionPlan {
  const ref = freeRef(board, "C");
  // An unannotated part ("U***") cannot be named: the new one goes next to what it shares nets with.
  const near = ic.includes("*") ? {} : { near: ic };
  const moves =
    moveBy && "near" in near
      ? [
          { ref, near: moveBy },
          { ref, near: ic },
        ]
      : [];
  return {
    request: `add a 100 nF decoupling capacitor next to ${ic}`,
    proposal: {
      title: `Add a 100 nF decoupling capacitor next to ${ic}`,
      why: `A 100 nF ceramic close to ${ic} lowers the high-frequency impedance of ${supply} where ${ic} draws its current.`,
      changes: [
        `add ${ref}, 100 nF ${size ?? "0603"}, next to ${ic}`,
        `connect ${ref} between ${supply} and ${ground}`,
        `sync the board: ${ref} goes next to ${ic}`,
        ...(moves.length > 0 ? [`try ${ref} next to ${moveBy}, then put it back next to ${ic}`] : []),
      ],
      refs: "near" in near ? [ic] : [],
      nets: [supply, ground].filter((n) => board.nets().some((b) => b.name === n)),
      new_refs: [ref],
      new_nets: [supply, ground].filter((n) => !board.nets().some((b) => b.name === n)),
    },
    adds: [
      [
        {
          lib_id: "Device:C",
          value: "100n",
          footprint: chip("Capacitor_SMD", "C", size),
          ref,
          ...near,
          connect: { "1": supply, "2": ground },
        },
      ],
    ],
    added: [{ ref, anchor: near.near }],
    moves,
    summary: `Added ${ref} (100 nF) between ${supply} and ${ground} next to ${ic}.`,
  };
}

/**
 * "Add a power LED with its series resistor between <supply> and <ground>", next to the main IC;
 * with `remove`, it also takes out those parts an earlier run added.
 */
function powerLedPlan(board: Board, { ic, supply, ground, size }: SessionTarget, remove: string[] = []): SessionPlan {
  const near = ic.includes("*") ? {} : { near: ic };
  const [led, resistor] = [freeRef(board, "D"), freeRef(board, "R")];
  return {
    request: `add a power LED with its series resistor between ${supply} and ${ground}${remove.length > 0 ? `, and remove ${remove.join(", ")}` : ""}`,
    proposal: {
      title: "Add a power LED with its series resistor",
      why: `Nothing shows that ${supply} is up. An LED with a 1k resistor from ${supply} to ${ground} does.`,
      changes: [
        ...remove.map((ref) => `remove ${ref}`),
        `add ${led}, a ${size ?? "0603"} LED, next to ${ic}`,
        `add ${resistor}, 1k, in series with ${led}`,
        `connect ${supply}, ${resistor}, ${led} and ${ground}`,
        "sync the board",
      ],
      refs: remove,
      nets: [supply, ground],
      new_refs: [led, resistor],
      new_nets: ["PWR_LED"],
    },
    adds: [
      [
        {
          lib_id: "Device:LED",
          value: "LED",
          footprint: chip("LED_SMD", "LED", size),
          ref: led,
          ...near,
          connect: { A: "PWR_LED", K: ground },
        },
        {
          lib_id: "Device:R",
          value: "1k",
          footprint: chip("Resistor_SMD", "R", size),
          ref: resistor,
          near: led,
          connect: { "1": supply, "2": "PWR_LED" },
        },
      ],
    ],
    added: [
      { ref: led, anchor: near.near },
      { ref: resistor, anchor: led },
    ],
    removes: remove,
    summary: `Added ${led} and ${resistor} in series between ${supply} and ${ground}.`,
  };
}

/** The capacitor request as a session of its own; `moveBy` moves it there and back (see {@link capacitorPlan}). */
export const capacitorSession = (board: Board, target: SessionTarget, moveBy?: string) =>
  sessionOf(capacitorPlan(board, target, moveBy));

/** The power LED request as a session of its own, removing `remove` (parts an earlier run added). */
export const powerLedSession = (board: Board, target: SessionTarget, remove: string[] = []) =>
  sessionOf(powerLedPlan(board, target, remove));

/** Both requests in one run: the capacitor (moved by way of `moveBy`), the LED and its resistor, one commit. */
export const bothInOneSession = (board: Board, target: SessionTarget, moveBy?: string) =>
  sessionOf(capacitorPlan(board, target, moveBy), powerLedPlan(board, target));

/**
 * The `add_component` inputs of the capacitor and of the LED request, for a test that calls the
 * tools itself (support/tool-context.ts) where the acceptance replays a session through `do`.
 */
export function finishAdditions(board: Board, target: SessionTarget) {
  return { capacitor: capacitorPlan(board, target).adds.flat(), led: powerLedPlan(board, target).adds.flat() };
}

/** How a layoutPending reason for a part with no free spot begins. */
const STAGED_REASON = "staged below the outline: no free spot";

/** The gap between two boxes, mm (0 when they overlap). */
function gap(a: BBox, b: BBox): number {
  return Math.hypot(Math.max(0, a.minX - b.maxX, b.minX - a.maxX), Math.max(0, a.minY - b.maxY, b.minY - a.maxY));
}

export interface SessionResult {
  /** How many times the run moved a part it placed, and the parts of earlier runs it removed. */
  moves: number;
  removed: string[];
  layoutPending: { ref: string; reason: string }[];
  verification: string;
  seconds: number;
}

/**
 * Runs `session` through `do` on `repo` and checks its commit against `base` (the board's bytes
 * and raw DRC before it). Returns what the run left for layout, for the caller to judge.
 */
export async function runAndCheck(
  cli: KicadCli,
  repo: string,
  projectFile: string,
  session: FinishSession,
  base: { bytes: Buffer; drc: ReturnType<typeof drcKeys> },
) {
  const boardFile = discoverProject(repo, projectFile).board!;
  const sessionFile = join(await makeTempDir(), "session.json");
  writeFileSync(
    sessionFile,
    JSON.stringify({
      schema: "copperhead.session/1",
      model: "scripted",
      description: session.request,
      turns: session.turns,
    }),
  );
  const started = performance.now();
  const run = await runBinary(
    ["do", session.request, "--model", `replay:${sessionFile}`, "--json", "--repo", repo, "--project", projectFile],
    { env: ISOLATED_ENV },
  );
  const seconds = (performance.now() - started) / 1000;
  expect(run.exitCode, `${session.request}\n${run.stdout}\n${run.stderr}`).toBe(0);
  const summary = JSON.parse(run.stdout);
  expect(summary.status, JSON.stringify(summary)).toBe("committed");
  const spots = movedThrough(join(repo, summary.transcriptPath), session);
  const after = readFileSync(boardFile);
  const message = await git(repo, "log", "-1", "--format=%B");
  const refs = session.added.map((a) => a.ref);

  // Raw DRC on the committed board: nothing new, or what is new is listed with its reason.
  const drc = drcKeys((await runDrc(boardFile, { cli, timeoutMs: DRC_TIMEOUT })).report);
  let added = addedErrors({ drc, bytes: after }, base);
  // No warning type grows: one more of a type is one the run made.
  let grown = grownWarnings(drc.warnings, base.drc.warnings);
  if (added.length + grown.length > 0) {
    // What KiCad's refill of the untouched base shows too is the filler's, as the gate judges it
    // (antenna-eval's SMA connectors keep one thermal spoke under KiCad 9's fill).
    const refilled = await baseRefilledDrc(cli, base.bytes, boardFile);
    added = addedKeys(added, refilled.errors);
    grown = addedKeys(grown, grownWarnings(refilled.warnings, base.drc.warnings));
  }
  expect(added).toEqual([]);
  expect(grown, "warning types grown").toEqual([]);
  // A removed part's own unconnected pads went with it: what is left for layout now is new.
  const removed = session.removed ?? [];
  const unrouted = addedUnconnected(
    drc.unconnected,
    base.drc.unconnected.filter((k) => !removed.some((ref) => k.includes(`of ${ref}`))),
    refs,
  );
  const pending: { ref: string; reason: string }[] = summary.layoutPending;
  if (pending.length === 0) {
    expect(unrouted).toEqual([]);
    expect(message).not.toContain("left for layout");
  } else {
    for (const p of pending) expect(refs).toContain(p.ref);
    expect(unrouted.every((k) => pending.some((p) => k.includes(`of ${p.ref}`)))).toBe(true);
    expect(message).toMatch(new RegExp(`Verification: .*routing: ${unrouted.length} connections? left for layout \\(`));
    expect(message).not.toMatch(/Verification: .*DRC clean/);
  }

  // The footprints: inside the outline, each within 15 mm of its anchor; a part left staged
  // below it (what blocked it is judged by the caller) stays outside, with a reason that says so,
  // and one whose connection is left for layout may stand at the nearest free spot farther off.
  const board = Board.parse(after);
  const at = (ref: string) => boardBounds(board.footprints().find((f) => f.ref === ref)!.node)!;
  const staged = pending.filter((p) => p.reason.startsWith(STAGED_REASON)).map((p) => p.ref);
  for (const { ref, anchor } of session.added) {
    expect(insideOutline(board, at(ref)), `${ref} inside the outline`).toBe(!staged.includes(ref));
    if (anchor && !staged.includes(ref) && !staged.includes(anchor) && !pending.some((p) => p.ref === ref))
      expect(gap(at(ref), at(anchor)), `${ref} to ${anchor}, mm`).toBeLessThanOrEqual(15);
  }

  // Every byte outside the new footprints, the new tracks and vias and the fills is the base's,
  // but for the removed footprints with the copper that went with them; the version too.
  const newNets = addedKeys(declaredNets(after), declaredNets(base.bytes));
  const goneNets = addedKeys(declaredNets(base.bytes), declaredNets(after));
  for (const ref of removed) expect(board.footprint(ref), `${ref} removed`).toBeUndefined();
  expect(withoutAdditions(after, refs, copperItems(base.bytes), newNets)).toBe(
    withoutAdditions(base.bytes, removed, removed.length > 0 ? copperItems(after) : undefined, goneNets),
  );
  expect(board.version).toBe(Board.parse(base.bytes).version);
  return {
    bytes: after,
    drc,
    board,
    boardFile,
    spots,
    result: {
      moves: session.moves ?? 0,
      removed: session.removed ?? [],
      layoutPending: pending,
      verification: message.match(/Verification: .*/)?.[0] ?? "",
      seconds,
    },
  };
}

/**
 * Where the session's parts stood on the way, from its transcript: where the board sync put each
 * new one and where each `place_footprint` moved it (every move the session makes must land),
 * as boxes on the copper layer of its side, for the fill comparison.
 */
function movedThrough(transcript: string, session: FinishSession): Around[] {
  const results = readFileSync(transcript, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((e) => e.type === "tool_result");
  const moves = results.filter((e) => e.name === "place_footprint");
  expect(
    moves.map((e) => (e.isError ? `refused: ${e.content}` : "moved")),
    "every move lands",
  ).toEqual(Array.from({ length: session.moves ?? 0 }, () => "moved"));
  const synced = results
    .filter((e) => e.name === "sync_board" && !e.isError)
    .flatMap((e) => (JSON.parse(e.content).added ?? []) as string[])
    .flatMap((line) => {
      const m = /at (-?[\d.]+), (-?[\d.]+) on the (front|back)/.exec(line);
      return m ? [{ x: Number(m[1]), y: Number(m[2]), side: m[3]! }] : [];
    });
  const placed = moves.map((e) => JSON.parse(e.content) as { x: number; y: number; side: string });
  // An 0603's pads lie within 1.3 mm of its origin (an 0402's closer); `around` grows them by 1 mm.
  return [...synced, ...placed].map(({ x, y, side }) => ({
    box: { minX: x - 2.5, minY: y - 2.5, maxX: x + 2.5, maxY: y + 2.5 },
    layers: new Set([side === "back" ? "B.Cu" : "F.Cu"]),
  }));
}

/** Raw DRC of `board` with every zone refilled by KiCad's filler (`refilled`, when made already), with the refilled board's bytes. */
async function refilledDrc(cli: KicadCli, board: Board, boardFile: string, refilled?: string) {
  const file = refilled ?? (await kicadRefill(boardFile, board));
  return {
    ...drcKeys((await runDrc(file, { cli, timeoutMs: DRC_TIMEOUT })).report),
    bytes: readFileSync(file),
  };
}

/**
 * {@link refilledDrc} of a base (`bytes`, refilled in `boardFile`'s place), asked once per base:
 * a session's check and the final refill check both hold a board against the same refilled
 * base, and each asking costs a whole-board refill and a raw DRC.
 */
function baseRefilledDrc(cli: KicadCli, bytes: Buffer, boardFile: string): ReturnType<typeof refilledDrc> {
  const key = `${boardFile}\0${createHash("sha256").update(bytes).digest("hex")}`;
  let refilled = refilledBases.get(key);
  if (!refilled) refilledBases.set(key, (refilled = refilledDrc(cli, Board.parse(bytes), boardFile)));
  return refilled;
}

const refilledBases = new Map<string, ReturnType<typeof refilledDrc>>();

/** How the committed fills are held against KiCad's refill of the committed board. */
export interface RefillCheck {
  /** Where each zone must equal KiCad's refill (`board-zones.ts`'s `around` the new parts). */
  window?: Around[];
  /**
   * Whether raw DRC of the refilled board is asked too (the default). vme-wren's takes minutes;
   * there the window's fills stand for it, with the commit's own raw DRC.
   */
  drc?: boolean;
}

/**
 * A refill of every zone by KiCad's filler: inside `window` each zone equals it; raw DRC sees
 * nothing the committed fills did not, and the committed fills keep no island it removes, but
 * for what a refill of the untouched base shows too (a board whose fills an older KiCad saved:
 * KiCad 9 refills some thermal reliefs differently all over it).
 */
export async function checkRefillChangesNothing(
  cli: KicadCli,
  board: Board,
  boardFile: string,
  drc: ReturnType<typeof drcKeys>,
  base: Buffer,
  { window, drc: askDrc = true }: RefillCheck = {},
) {
  const refilled = await kicadRefill(boardFile, board);
  if (window) expect(await differingFromKicad(boardFile, window, refilled)).toEqual([]);
  if (!askDrc) return;
  const again = await refilledDrc(cli, board, boardFile, refilled);
  // Nor do the committed fills keep an island KiCad's refill of them has not (a strip a few
  // micrometres wide where the saved fill met the refill window's edge did, on rvpc-revb), but
  // for those the base's saved fills keep and KiCad's refill of the base removes.
  if (drc.isolated > again.isolated) {
    const baseFile = join(await makeTempDir(), basename(boardFile));
    for (const ext of [".kicad_pro", ".kicad_dru"]) {
      const beside = boardFile.replace(/\.kicad_pcb$/, ext);
      if (existsSync(beside)) copyFileSync(beside, baseFile.replace(/\.kicad_pcb$/, ext));
    }
    writeFileSync(baseFile, base);
    const saved = drcKeys((await runDrc(baseFile, { cli, timeoutMs: DRC_TIMEOUT })).report);
    const stale = await baseRefilledDrc(cli, base, boardFile);
    expect(drc.isolated).toBeLessThanOrEqual(again.isolated + Math.max(0, saved.isolated - stale.isolated));
  }
  // The refill changes only fills: a violation between unchanged items that KiCad reports with
  // another partner is the committed board's (multichannel's RV5 against the IC3B track RV6 had).
  let errors = addedErrors({ drc: again, bytes: again.bytes }, { drc, bytes: readFileSync(boardFile) });
  let unconnected = addedUnconnected(again.unconnected, drc.unconnected, []);
  if (errors.length + unconnected.length > 0) {
    const stale = await baseRefilledDrc(cli, base, boardFile);
    errors = addedKeys(errors, stale.errors);
    unconnected = addedUnconnected(unconnected, stale.unconnected, []);
  }
  expect(errors).toEqual([]);
  expect(unconnected).toEqual([]);
}

/** How one board's acceptance runs. */
export interface FinishOptions {
  /** Parts may be left for layout (a board whose test file says why). */
  mayLeave?: boolean;
  /** Both requests in one run, one commit (the capacitor still moved, nothing removed). */
  together?: boolean;
  /** Raw DRC of the final board refilled by KiCad (the default; see {@link RefillCheck}). */
  refillDrc?: boolean;
}

/**
 * Both sessions on one board, one after the other in one repo copy (or, `together`, both
 * requests in one run): the LED session's base is the capacitor session's commit, so one raw
 * DRC per board state serves both. The capacitor's run moves it twice and the LED's run removes
 * it. Nothing may be left for layout unless `mayLeave`, and then what the reason
 * names as in the way is on the board near the part. At the end every zone equals KiCad's
 * refill of the committed board where each part is and was.
 */
export async function finishAcceptance(
  cli: KicadCli,
  projectId: string,
  { mayLeave = false, together = false, refillDrc = true }: FinishOptions = {},
): Promise<SessionResult[]> {
  const project = everyProject().find((p) => p.id === projectId);
  if (!project) throw new Error(`no corpus project ${projectId}`);
  const repo = await initialisedCorpusRepo(project);
  const boardFile = discoverProject(repo, project.projectFile).board!;
  const base = readFileSync(boardFile);
  // The base is the project as shipped, whose raw DRC the corpus tests share (support/kicad-cache.ts):
  // vme-wren's takes minutes, and the findings test asks for it too.
  expect(base.equals(readFileSync(project.board!)), "the repo's board is the project's").toBe(true);
  let bytes = base;
  let drc = drcKeys((await cachedParityDrc(cli, project.root, project.board!, DRC_TIMEOUT)).report);
  const results: SessionResult[] = [];
  // Where every part the sessions added or moved stands or stood: the fills there must be KiCad's.
  const window: Around[] = [];
  let last: Awaited<ReturnType<typeof runAndCheck>> | undefined;
  const board = Board.parse(bytes);
  const target = sessionTarget(projectId, board);
  const moveBy = otherLoad(board, target);
  const capacitor = capacitorSession(board, target, moveBy);
  // Each session is made from the board its run starts from.
  const sessions: ((from: Board) => FinishSession)[] = together
    ? [(from) => bothInOneSession(from, target, moveBy)]
    : [
        () => capacitor,
        (from) =>
          powerLedSession(
            from,
            target,
            capacitor.added.map((a) => a.ref),
          ),
      ];
  for (const make of sessions) {
    const session = make(Board.parse(bytes));
    last = await runAndCheck(cli, repo, project.projectFile, session, { bytes, drc });
    ({ bytes, drc } = last);
    window.push(...session.added.flatMap((a) => around(last!.boardFile, a.ref)), ...last.spots);
    results.push(last.result);
    if (mayLeave)
      expectBlockersExist(last.board, last.result.layoutPending, new Map(session.added.map((a) => [a.ref, a.anchor])));
    else expect(last.result.layoutPending, `${projectId}: left for layout`).toEqual([]);
  }
  await checkRefillChangesNothing(cli, last!.board, last!.boardFile, last!.drc, base, { window, drc: refillDrc });
  return results;
}

/**
 * A part left for layout on a board where that is allowed: every item its reason names as in
 * the way is on the board, within reach of the part. A connection names copper ("pad 2 of U3",
 * "a track of GND on F.Cu"); a part with no free spot names courtyards near the part it was to
 * go beside ("the courtyard of D25"); a pad waiting for a staged part names a part staged too.
 */
export function expectBlockersExist(
  board: Board,
  pending: { ref: string; reason: string }[],
  anchors: Map<string, string | undefined>,
) {
  const bounds = (ref: string) => boardBounds(board.footprints().find((f) => f.ref === ref)!.node)!;
  const staged = new Set(pending.filter((p) => p.reason.startsWith(STAGED_REASON)).map((p) => p.ref));
  for (const { ref, reason } of pending) {
    for (const [, waited] of reason.matchAll(/waits for (\S+), staged below the outline/g))
      expect(staged.has(waited!), `${ref} waits for ${waited}, which is staged`).toBe(true);
    if (/^[^;]*: waits for \S+, staged below the outline$/.test(reason)) continue;
    const part = bounds((staged.has(ref) && anchors.get(ref)) || ref);
    // "a via of GND at 149.9, 87.5" holds the list's separator: split between items only. A net
    // KiCad names for a pad ("a track of Net-(D18-1) on B.Cu") holds parentheses.
    const inner = String.raw`[^()]*(?:\([^()]*\)[^()]*)*`;
    const list = new RegExp(String.raw`\((?:in the way: (${inner})|[^()]* to (${inner}))\)`, "g");
    const named = [...reason.matchAll(list)].flatMap((m) => (m[1] ?? m[2]!).split(/, (?![-\d.]+(?:,|$))/));
    named.push(...[...reason.matchAll(/the courtyard of (\S+) \(/g)].map((m) => `the courtyard of ${m[1]}`));
    expect(named.length, `${ref}: ${reason} names what is in the way`).toBeGreaterThan(0);
    for (const what of named) {
      const pad = /^pad (\S+) of (\S+)$/.exec(what);
      const track = /^a track of (.+) on (\S+)$/.exec(what);
      const pour = /^the (.+) pour on (\S+)$/.exec(what);
      const courtyard = /^the courtyard of (\S+)$/.exec(what);
      const via = /^a via of (.+) at ([-\d.]+), ([-\d.]+)$/.exec(what);
      const near = (b: BBox) => gap(b, part) <= 15;
      if (pour) {
        const zone = boardZones(board.root).find((z) => z.net === pour[1] && z.filled && zoneOnLayer(z, pour[2]!));
        expect(zone, `${what} is on the board`).toBeDefined();
        expect(near(zone!.box), `${what} is near ${ref}`).toBe(true);
      } else if (via) {
        const [x, y] = [Number(via[2]), Number(via[3])];
        const found = board.root.items.some((i) => {
          if (i.type !== "list" || i.items[0]?.type !== "atom" || i.items[0].raw !== "via") return false;
          const at = /\(at ([-\d.]+) ([-\d.]+)\)/.exec(printSexpr(i as never));
          return at !== null && Math.hypot(Number(at[1]) - x, Number(at[2]) - y) < 0.01;
        });
        expect(found, `${what} is on the board`).toBe(true);
        expect(near({ minX: x, minY: y, maxX: x, maxY: y }), `${what} is near ${ref}`).toBe(true);
      } else if (courtyard) {
        expect(
          board.footprints().some((f) => f.ref === courtyard[1]),
          `${what} is on the board`,
        ).toBe(true);
        expect(near(bounds(courtyard[1]!)), `${what} is near where ${ref} was to go`).toBe(true);
      } else if (pad) {
        const fp = board.footprints().find((f) => f.ref === pad[2]);
        expect(
          fp?.pads.some((p) => p.number === pad[1]),
          `${what} is on the board`,
        ).toBe(true);
        expect(near(boardBounds(fp!.node)!), `${what} is near ${ref}`).toBe(true);
      } else if (track) {
        const segments = board.root.items.filter(
          (i) => i.type === "list" && i.items[0]?.type === "atom" && i.items[0].raw === "segment",
        );
        const found = segments.some((s) => {
          const text = printSexpr(s as never);
          const [x1, y1, x2, y2] = [...text.matchAll(/\((?:start|end) ([-\d.]+) ([-\d.]+)\)/g)].flatMap((m) => [
            Number(m[1]),
            Number(m[2]),
          ]);
          const netOk =
            board.netFormat === "named"
              ? text.includes(`(net "${track[1]}")`)
              : board.nets().some((n) => n.name === track[1] && text.includes(`(net ${n.code})`));
          return (
            netOk &&
            text.includes(`(layer "${track[2]}")`) &&
            near({
              minX: Math.min(x1!, x2!),
              minY: Math.min(y1!, y2!),
              maxX: Math.max(x1!, x2!),
              maxY: Math.max(y1!, y2!),
            })
          );
        });
        expect(found, `${what} is near ${ref}`).toBe(true);
      } else {
        throw new Error(`${ref}: the reason names "${what}", which this test cannot look for`);
      }
    }
  }
}

/**
 * The one demo board where connections may be left for layout: StickHub, a 19 × 52 mm hub with
 * U1 on the back. Within 15 mm of U1 the front has no clear spot and the back two small pockets;
 * from every spot in them the capacitor's +1V8 pad is boxed in by a GND track and the MP pads
 * of J4 and J5. The LED's resistor, its reference hidden as StickHub hides its others, takes
 * the last free spot, from which its +1V8 pad finds no rule-clean path either.
 */
export const DEMO_LEFT_FOR_LAYOUT = ["demos/stickhub/StickHub"];

/**
 * The acceptance as a test file runs it: one test per project, both sessions in each, through
 * the compiled binary (`FINISH_ONLY=id,…` narrows it while working on one board).
 */
export function finishSuite(
  title: string,
  projects: CorpusProject[],
  mayLeave: readonly string[] = [],
  { timeoutMs = 900_000, ...options }: { timeoutMs?: number } & Omit<FinishOptions, "mayLeave"> = {},
): void {
  let cli: KicadCli;
  beforeAll(async () => {
    requireBinary();
    cli = await requireKicadCli();
  }, 120_000);
  afterAll(cleanupTempDirs);
  const only = process.env.FINISH_ONLY?.split(",");
  describe(title, () => {
    for (const project of projects.filter((p) => !only || only.some((o) => p.id.endsWith(o)))) {
      test(
        project.id,
        async () => {
          const results = await finishAcceptance(cli, project.id, {
            ...options,
            mayLeave: mayLeave.includes(project.id),
          });
          console.log(`${project.id}: ${JSON.stringify(results)}`);
        },
        timeoutMs,
      );
    }
  });
}

/**
 * The demo whose acceptance has a file of its own (`board-finish-vme-wren.test.ts`): its raw
 * DRCs take minutes each, about fifteen minutes in all, so the recorded timings start it first.
 */
export const BIG_DEMO = "demos/vme-wren/vme-wren";

/** KiCad's demo boards with a zone and a schematic, but {@link BIG_DEMO}. */
export function demosWithZones(): CorpusProject[] {
  return demoProjects().filter(
    (p) => p.board && p.schematic && p.id !== BIG_DEMO && readFileSync(p.board, "utf8").includes("(zone"),
  );
}
