/**
 * The semantic diff on real designs of the open-hardware corpus (KiCad 6, 7, 8 and 9 projects):
 * a state against itself is empty, and
 * scripted edits — a value, a pure move, a renamed net label; a moved and a swapped footprint,
 * a renamed board net, a new track — produce exactly their entries and nothing else.
 *
 * The parts to edit are picked by what the edit needs (a sheet used once, a symbol whose every
 * pin meets exactly one wire end), not by what the diff then says.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { runDiff } from "../../src/commands/diff.ts";
import { loadDesignState, type DesignState } from "../../src/diff/design-state.ts";
import { naturalCompare } from "../../src/util/natural-compare.ts";
import { collectItems, type ConnItem } from "../../src/kicad/schematic/connectivity.ts";
import { onSegment, samePoint, toIU, type PointIu } from "../../src/kicad/schematic/geometry.ts";
import type { SheetInstance } from "../../src/kicad/schematic/model/hierarchy.ts";
import { symbolInstance, type PlacedSymbol } from "../../src/kicad/schematic/model/symbols.ts";
import { git } from "../repo/git-repo.ts";
import { BoardEdit } from "../support/board-edits.ts";
import { copyCorpusProject, corpusProjects, type CorpusProject } from "../support/corpora.ts";
import { expectOnly } from "../support/diff.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { SchematicEdit } from "../support/schematic-edit.ts";
import { child, children, childText, q, setAtom } from "../../src/kicad/sexpr/index.ts";

afterAll(cleanupTempDirs);

/** Every project of the open-hardware corpus: KiCad 6, 7, 8 and 9 files. */
const PROJECTS = [...new Set(corpusProjects().map((p) => p.id))];
/**
 * Projects the schematic edit below can be scripted on: antenna-eval names no net with a local
 * label, and no symbol of sweep-half-swept has every pin on a wire of its own to drag along.
 */
const SCHEMATIC_EDITABLE = PROJECTS.filter((id) => id !== "corpus/antenna-eval" && id !== "corpus/sweep-half-swept");
const MOVE = { dx: 1.27, dy: 1.27 };

async function committed(id: string): Promise<{ project: CorpusProject; repo: string; state: DesignState }> {
  const project = corpusProjects().find((p) => p.id === id);
  if (!project) throw new Error(`${id} is missing from the corpus`);
  const copy = await copyCorpusProject(project);
  await git(copy.root, "init", "--quiet", "--initial-branch=main");
  await git(copy.root, "add", "-A");
  await git(copy.root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "design");
  const state = loadDesignState({ root: copy.root, projectFile: copy.projectFile, docs: "docs", label: "HEAD" });
  return { project: copy, repo: copy.root, state };
}

/** Sheet instances whose file is used by no other instance (an edit there changes one sheet). */
function singleSheets(state: DesignState): SheetInstance[] {
  const uses = new Map<string, number>();
  for (const i of state.schematic!.instances) uses.set(i.file.path, (uses.get(i.file.path) ?? 0) + 1);
  return state.schematic!.instances.filter((i) => uses.get(i.file.path) === 1);
}

interface Placed {
  instance: SheetInstance;
  symbol: PlacedSymbol;
  ref: string;
}

function placedParts(state: DesignState, instances: SheetInstance[]): Placed[] {
  const units = new Map(state.components.map((c) => [c.ref, c.symbols.length]));
  return instances
    .flatMap((instance) =>
      instance.file.symbols.map((symbol) => ({
        instance,
        symbol,
        ref: symbolInstance(symbol, instance.path, state.schematic!.projectName).reference,
      })),
    )
    .filter((p) => units.get(p.ref) === 1)
    .sort((a, b) => naturalCompare(a.ref, b.ref));
}

/**
 * Every pin tip meets exactly one wire end and nothing else, nothing sits along those wires,
 * and nothing is where the tips will be after the move: dragging the wire ends along is then
 * a pure move.
 */
function draggable(p: Placed, projectName: string): boolean {
  const items = collectItems(p.instance, projectName);
  const pins = items.filter((i) => i.kind === "pin" && i.pin.symbol === p.symbol);
  if (pins.length === 0) return false;
  const offset = { x: toIU(MOVE.dx), y: toIU(MOVE.dy) };
  const at = (i: ConnItem, point: PointIu) => i.points.some((q) => samePoint(q, point));
  return pins.every((pin) => {
    const tip = pin.points[0]!;
    const touching = items.filter((i) => i !== pin && at(i, tip));
    if (touching.length !== 1 || touching[0]!.kind !== "wire") return false;
    const wire = touching[0]! as Extract<ConnItem, { line: unknown }>;
    const along = items.some(
      (i) =>
        i !== wire &&
        i !== pin &&
        i.points.some(
          (q) => onSegment(q, wire.line.a, wire.line.b) && !samePoint(q, wire.line.a) && !samePoint(q, wire.line.b),
        ),
    );
    const landing = { x: tip.x + offset.x, y: tip.y + offset.y };
    return (
      !along &&
      !items.some((i) => at(i, landing) || (i.kind === "wire" && i !== wire && onSegment(landing, i.line.a, i.line.b)))
    );
  });
}

describe("corpus/glasgow-revc3", () => {
  test("two units of the FPGA trade places (their uuids swapped): two unit changes and two moves, no connectivity change", async () => {
    const { project, repo, state } = await committed("corpus/glasgow-revc3");
    const u30 = state.components.find((c) => c.ref === "U30")!;
    const [a, b] = [1, 2].map((unit) => u30.symbols.find((s) => s.unit === unit)!);
    const instance = state.schematic!.instances.find(
      (i) => i.file.symbols.includes(a!) && i.file.symbols.includes(b!),
    )!;
    expect(instance, "units 1 and 2 on one sheet").toBeDefined();
    const sheet = new SchematicEdit(instance.file.path);
    const [nodeA, nodeB] = [a!, b!].map(
      (s) => children(sheet.root, "symbol").find((node) => childText(node, "uuid") === s.uuid)!,
    );
    setAtom(child(nodeA!, "uuid")!, 1, q(b!.uuid));
    setAtom(child(nodeB!, "uuid")!, 1, q(a!.uuid));
    sheet.save();
    const diff = await runDiff({ repo });
    const at = (s: PlacedSymbol) => ({
      x: s.placement.at.x / 1e4,
      y: s.placement.at.y / 1e4,
      angle: s.placement.rotation,
      ...(s.placement.mirror ? { mirror: s.placement.mirror } : {}),
    });
    // The two unit changes come in the order of the symbols' uuids; compare them in unit order.
    diff.components[0]?.changes.sort((x, y) => Number(x.before) - Number(y.before));
    expectOnly(diff, project.projectFile, {
      sheets: [{ path: instance.humanPath, status: "changed", file: instance.file.path.slice(repo.length + 1) }],
      components: [
        {
          ref: "U30",
          status: "changed",
          sheet: u30.sheet,
          value: u30.value,
          footprint: u30.footprint,
          libId: u30.libId,
          changes: [
            { field: "unit", before: "1", after: "2" },
            { field: "unit", before: "2", after: "1" },
          ],
          moves: [
            { unit: 1, sheet: instance.humanPath, before: at(b!), after: at(a!) },
            { unit: 2, sheet: instance.humanPath, before: at(a!), after: at(b!) },
          ],
          pins: [],
        },
      ],
    });
  }, 60_000);
});

describe.each(PROJECTS)("%s", (id) => {
  test("the committed state against itself is empty", async () => {
    const { project, repo } = await committed(id);
    const diff = await runDiff({ repo });
    expectOnly(diff, project.projectFile, {});
  }, 60_000);

  if (SCHEMATIC_EDITABLE.includes(id))
    test("a value, a pure move and a renamed net label: exactly those three entries", async () => {
      const { project, repo, state } = await committed(id);
      const projectName = state.schematic!.projectName;
      const sheets = singleSheets(state);
      const parts = placedParts(state, sheets);
      const mover = parts.find((p) => draggable(p, projectName));
      const changed = parts.find(
        (p) =>
          p.ref !== mover?.ref &&
          p.instance === mover?.instance &&
          state.components.find((c) => c.ref === p.ref)!.value !== "",
      );
      expect(mover, "a symbol that can be dragged").toBeDefined();
      expect(changed, "a second part on the same sheet").toBeDefined();
      // A local label that names its net, alone with that name on its sheet.
      const netNames = new Set(state.netlist.nets.filter((n) => n.nodes.length >= 2).map((n) => n.name));
      const label = sheets
        .flatMap((instance) =>
          instance.file.labels.filter((l) => l.kind === "local").map((l) => ({ instance, label: l })),
        )
        .find(
          ({ instance, label: l }) =>
            netNames.has(`${instance.humanPath}${l.text}`) &&
            instance.file.labels.filter((o) => o.text === l.text).every((o) => o.kind === "local") &&
            !/[{}[\]~]/.test(l.text),
        );
      expect(label, "a local label that drives its net").toBeDefined();

      const moverFile = new SchematicEdit(mover!.instance.file.path);
      moverFile.moveSymbol(mover!.ref, MOVE.dx, MOVE.dy);
      moverFile.setField(changed!.ref, "Value", "DIFF-TEST");
      moverFile.save();
      const labelFile = new SchematicEdit(label!.instance.file.path);
      labelFile.renameLabels(label!.label.text, `${label!.label.text}_RENAMED`);
      labelFile.save();

      const diff = await runDiff({ repo, project: project.projectFile });
      const before = (ref: string) => state.components.find((c) => c.ref === ref)!;
      const place = mover!.symbol.placement;
      const expectedSheets = [...new Set([mover!.instance, label!.instance])].map((i) => ({
        path: i.humanPath,
        status: "changed" as const,
        file: i.file.path.slice(repo.length + 1),
      }));
      const net = `${label!.instance.humanPath}${label!.label.text}`;
      expectOnly(diff, project.projectFile, {
        sheets: expectedSheets.sort((a, b) =>
          a.path === "/" ? -1 : b.path === "/" ? 1 : naturalCompare(a.path, b.path),
        ),
        components: [
          {
            ref: mover!.ref,
            status: "moved" as const,
            sheet: mover!.instance.humanPath,
            value: before(mover!.ref).value,
            footprint: before(mover!.ref).footprint,
            libId: before(mover!.ref).libId,
            changes: [],
            moves: [
              {
                unit: symbolInstance(mover!.symbol, mover!.instance.path, projectName).unit,
                sheet: mover!.instance.humanPath,
                before: {
                  x: place.at.x / 1e4,
                  y: place.at.y / 1e4,
                  angle: place.rotation,
                  ...(place.mirror ? { mirror: place.mirror } : {}),
                },
                after: {
                  x: Math.round((place.at.x / 1e4 + MOVE.dx) * 1e4) / 1e4,
                  y: Math.round((place.at.y / 1e4 + MOVE.dy) * 1e4) / 1e4,
                  angle: place.rotation,
                  ...(place.mirror ? { mirror: place.mirror } : {}),
                },
              },
            ],
            pins: [],
          },
          {
            ref: changed!.ref,
            status: "changed" as const,
            sheet: changed!.instance.humanPath,
            value: "DIFF-TEST",
            footprint: before(changed!.ref).footprint,
            libId: before(changed!.ref).libId,
            changes: [{ field: "Value", before: before(changed!.ref).value, after: "DIFF-TEST" }],
            moves: [],
            pins: [],
          },
        ].sort((a, b) => naturalCompare(a.ref, b.ref)),
        nets: [
          {
            status: "renamed" as const,
            name: `${net}_RENAMED`,
            before: net,
            members: state.netlist.nets
              .find((n) => n.name === net)!
              .nodes.map((n) => `${n.ref}.${n.pin}`)
              .sort(naturalCompare),
          },
        ],
      });
    }, 60_000);

  test("a moved and a swapped footprint, a renamed board net, a new track: exactly those", async () => {
    const { project, repo, state } = await committed(id);
    const board = state.board!;
    const refs = new Map<string, number>();
    for (const fp of board.footprints()) refs.set(fp.ref, (refs.get(fp.ref) ?? 0) + 1);
    const footprints = board
      .footprints()
      .filter((fp) => fp.ref && refs.get(fp.ref) === 1 && !fp.ref.startsWith("#"))
      .sort((a, b) => naturalCompare(a.ref, b.ref));
    const [moved, swapped] = footprints;
    const padNets = new Map<string, string[]>();
    for (const fp of board.footprints()) {
      for (const pad of fp.pads)
        if (pad.net?.name && pad.number && fp.ref)
          padNets.set(pad.net.name, [...(padNets.get(pad.net.name) ?? []), `${fp.ref}.${pad.number}`]);
    }
    const [net, pads] = [...padNets].filter(([, p]) => p.length >= 2).sort(([a], [b]) => naturalCompare(a, b))[0]!;

    const edit = new BoardEdit(project.board!);
    edit.moveFootprint(moved!.ref, 1, 1);
    edit.swapFootprint(swapped!.ref, "Diff_Test:Swapped");
    edit.renameNet(net, `${net}_RENAMED`);
    edit.addSegment([1, 1], [2, 1], "F.Cu", `${net}_RENAMED`, 0.2);
    edit.save();

    const diff = await runDiff({ repo, project: project.projectFile });
    const at = (fp: typeof moved) => ({ x: fp!.at.x, y: fp!.at.y, angle: fp!.at.rotation, layer: fp!.layer });
    expectOnly(diff, project.projectFile, {
      board: {
        status: "changed" as const,
        footprints: [
          {
            ref: moved!.ref,
            status: "moved" as const,
            libId: moved!.libId,
            value: moved!.value,
            move: {
              before: at(moved),
              after: {
                ...at(moved),
                x: Math.round((moved!.at.x + 1) * 1e6) / 1e6,
                y: Math.round((moved!.at.y + 1) * 1e6) / 1e6,
              },
            },
            changes: [],
            pads: [],
          },
          {
            ref: swapped!.ref,
            status: "swapped" as const,
            libId: "Diff_Test:Swapped",
            value: swapped!.value,
            swappedFrom: swapped!.libId,
            changes: [],
            pads: [],
          },
        ].sort((a, b) => naturalCompare(a.ref, b.ref)),
        nets: [
          {
            status: "renamed" as const,
            name: `${net}_RENAMED`,
            before: net,
            members: [...new Set(pads)].sort(naturalCompare),
          },
        ],
        pads: [],
        tracks: [
          {
            status: "added" as const,
            kind: "segment" as const,
            net: `${net}_RENAMED`,
            layers: ["F.Cu"],
            start: [1, 1],
            end: [2, 1],
            width: 0.2,
          },
        ],
        zones: [],
        layers: [],
        outline: null,
      },
    });
  }, 60_000);
});
