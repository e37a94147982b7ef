/**
 * Routing as the designer routes: a new track is as wide as the widest track its net already
 * has near the connection (a rail stays a rail), and a track that ends on a pad ends on the
 * pad's anchor, whatever the pad's shape (a rounded rectangle's corner is no copper), so
 * KiCad's connectivity agrees it is connected; a part the run routed another new part to moves,
 * and both are routed again; a pad joined to no copper of its net is no way to the net. On
 * copies of real boards, with raw DRC.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { runDrc } from "../../src/kicad/cli/kicad-cli.ts";
import { copperLayers, footprintItems, type BoardItem } from "../../src/kicad/board/clearance/items.ts";
import { BoardObstacles } from "../../src/kicad/board/clearance/obstacles.ts";
import { BoardRules } from "../../src/kicad/board/clearance/rules.ts";
import { connectAdded } from "../../src/kicad/board/route/connect-added.ts";
import { applyBoardSync } from "../../src/kicad/board/sync/sync-board.ts";
import { Board } from "../../src/kicad/board/model.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { child, childText, head, num, text } from "../../src/kicad/sexpr/index.ts";
import { additionPlan, decouplingNets, mainIc } from "../support/board-additions.ts";
import {
  addedUnconnected,
  capacitorSession,
  drcKeys,
  powerLedSession,
  sessionTarget,
} from "../support/board-finish.ts";
import { copyCorpusProject, corpusProjects, demosDir } from "../support/corpora.ts";
import { commitAll, git } from "../repo/git-repo.ts";
import { demoRepo } from "../support/demo-repo.ts";
import { cleanupTempDirs, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

async function copyBoard(board: string): Promise<string> {
  const dir = await makeTempDir();
  const stem = basename(board, ".kicad_pcb");
  for (const ext of [".kicad_pcb", ".kicad_pro", ".kicad_dru"]) {
    const from = join(dirname(board), stem + ext);
    if (existsSync(from)) copyFileSync(from, join(dir, stem + ext));
  }
  return join(dir, `${stem}.kicad_pcb`);
}

interface Segment {
  start: { x: number; y: number };
  end: { x: number; y: number };
  width: number;
  net: string;
}

/** The segments of `board` whose ids are in `ids`. */
function segmentsOf(board: Board, ids: Set<string>): Segment[] {
  const names = new Map(board.nets().map((n) => [String(n.code), n.name]));
  return board.root.items.flatMap((node) => {
    if (
      node.type !== "list" ||
      head(node) !== "segment" ||
      !ids.has(childText(node, "uuid") ?? childText(node, "tstamp") ?? "")
    )
      return [];
    const at = (name: string) => ({ x: num(child(node, name)!, 1)!, y: num(child(node, name)!, 2)! });
    const net = text(child(node, "net")!, 1) ?? "";
    return [{ start: at("start"), end: at("end"), width: num(child(node, "width")!, 1)!, net: names.get(net) ?? net }];
  });
}

describe("routing as the designer routes", () => {
  test("kit-dev-coldfire: a new track of +3.3V is as wide as the rail's tracks beside it, not the class's", async () => {
    const file = await copyBoard(
      join(demosDir(), "kit-dev-coldfire-xilinx_5213/kit-dev-coldfire-xilinx_5213.kicad_pcb"),
    );
    const board = Board.load(file);
    const rules = BoardRules.load(file.replace(/\.kicad_pcb$/, ".kicad_pro"), null);
    const ic = mainIc(board);
    const nets = decouplingNets(board, ic);
    const plan = additionPlan(board, "C900", "Capacitor_SMD:C_0603_1608Metric", nets);
    const libraries = await openLibraries(dirname(file));
    // A spot beside the main IC with room for the rail's width on the way (the routing is
    // what is tested here; a spot where only the class's width gets through takes that).
    Object.assign(plan.added[0]!, { at: { x: 190.5, y: 98.552, rotation: 270 }, side: "front", staged: false });
    const index = new BoardObstacles(board, rules);
    applyBoardSync(board, plan, libraries);
    const { outcomes } = await connectAdded(board, file, rules, ["C900"]);
    const laid = segmentsOf(board, new Set(outcomes.flatMap((o) => o.ids)));
    expect(laid.length).toBeGreaterThan(0);
    for (const net of new Set(laid.map((s) => s.net))) {
      const pads = footprintItems(board.footprint("C900")!.node, copperLayers(board)).filter(
        (p) => p.kind === "pad" && p.net === net,
      );
      const nearby = pads.flatMap((p) =>
        index.near(
          { minX: p.box.minX - 10, minY: p.box.minY - 10, maxX: p.box.maxX + 10, maxY: p.box.maxY + 10 },
          (i) => i.kind === "track" && i.net === net,
        ),
      );
      const widest = Math.max(rules.trackWidth(net), ...nearby.map((t) => t.width ?? 0));
      expect(widest).toBeGreaterThan(rules.trackWidth(net));
      expect({ net, widths: [...new Set(laid.filter((s) => s.net === net).map((s) => s.width))] }).toEqual({
        net,
        widths: [widest],
      });
    }
  }, 180_000);

  test("complex_hierarchy: a new part another new part is routed to moves, and both are routed again (its copper is the run's, not there before)", async () => {
    const project = await demoRepo("complex_hierarchy/complex_hierarchy");
    const file = join(project.root, "complex_hierarchy.kicad_pcb");
    const cli = await requireKicadCli();
    const base = drcKeys((await runDrc(file, { cli })).report);
    const ic = mainIc(Board.load(file));
    await withTools(project.root, async ({ call, ctx }) => {
      const first = (await call("add_component", {
        lib_id: "Device:C",
        value: "100n",
        footprint: "Capacitor_SMD:C_0603_1608Metric",
        near: ic.ref,
        connect: { "1": "FILTER_TAP", "2": "GND" },
      })) as { ref: string };
      await call("sync_board");
      const second = (await call("add_component", {
        lib_id: "Device:C",
        value: "100n",
        footprint: "Capacitor_SMD:C_0603_1608Metric",
        near: first.ref,
        connect: { "1": "FILTER_TAP", "2": "GND" },
      })) as { ref: string };
      const synced = (await call("sync_board")) as { routing: string[] };
      // The second capacitor's tap is routed to the first one's pad, the only copper of its net,
      // and ends on that rounded pad's anchor (it ended where it first met the pad's box).
      expect(synced.routing).toContainEqual(
        expect.stringMatching(new RegExp(`^${second.ref}: .*pad 1 \\(\\S*FILTER_TAP\\) routed`)),
      );
      expect(endsOnAnchor(file, first.ref, "1")).toBe(true);
      // It was refused: "C1 is routed with copper that was there before this run".
      const moved = (await call("place_footprint", { ref: first.ref, near: ic.ref, side: "back" })) as {
        routing: string[];
      };
      expect(moved.routing.map((r) => r.split(":")[0])).toEqual([first.ref, second.ref]);
      expect(endsOnAnchor(file, first.ref, "1")).toBe(true);
      expect([...ctx.layoutPending].filter(([ref]) => ref === first.ref || ref === second.ref)).toEqual([]);
    });
    const drc = drcKeys((await runDrc(file, { cli })).report);
    expect(addedUnconnected(drc.unconnected, base.unconnected, [])).toEqual([]);
  }, 600_000);
});

/** Whether a track of the pad's net ends on the anchor of pad `number` of `ref` (a rounded rectangle). */
function endsOnAnchor(file: string, ref: string, number: string): boolean {
  const board = Board.load(file);
  const fp = board.footprint(ref)!;
  const pad = footprintItems(fp.node, copperLayers(board)).find((p) => p.kind === "pad" && p.pad === number)!;
  expect(roundrect(fp.node, pad)).toBe(true);
  const anchor = pad.ends![0]!;
  const tracks = new BoardObstacles(board, BoardRules.load(file.replace(/\.kicad_pcb$/, ".kicad_pro"), null)).all(
    (i) => i.kind === "track" && i.net === pad.net,
  );
  return tracks.some((t) => t.ends!.some((p) => Math.hypot(p.x - anchor.x, p.y - anchor.y) < 1e-6));
}

/** Whether a pad item of `fp` is a rounded rectangle. */
function roundrect(fp: import("../../src/kicad/sexpr/index.ts").SList, pad: BoardItem): boolean {
  const node = fp.items.find((n) => n.type === "list" && head(n) === "pad" && text(n, 1) === pad.pad);
  return node?.type === "list" && text(node, 3) === "roundrect" && text(node, 2) === "smd";
}

describe("a pad that touches no copper of its net is no way to the net", () => {
  test("emf-hexpansion: the LED's resistor is not routed to the capacitor an earlier run left for layout", async () => {
    const project = await copyCorpusProject(corpusProjects().find((p) => p.id === "corpus/emf-hexpansion")!);
    await git(project.root, "init", "--quiet");
    await commitAll(project.root, "base");
    const boardFile = project.board!;
    const board = Board.load(boardFile);
    const target = sessionTarget("corpus/emf-hexpansion", board);
    const capacitor = capacitorSession(board, target).added[0]!.ref;
    const [led, resistor] = powerLedSession(board, target).added.map((a) => a.ref);
    const cli = await requireKicadCli();
    const unconnected = async () => drcKeys((await runDrc(boardFile, { cli })).report).unconnected;
    await withTools(project.root, async ({ call }) => {
      await call("add_component", {
        ref: capacitor,
        lib_id: "Device:C",
        value: "100n",
        footprint: "Capacitor_SMD:C_0603_1608Metric",
        near: target.ic,
        connect: { "1": target.supply, "2": target.ground },
      });
      await call("sync_board");
    });
    // Its supply pad is boxed in: left for layout, bare. The run commits, as `do` would.
    const before = await unconnected();
    await commitAll(project.root, "C");
    expect(before.some((k) => k.includes(`of ${capacitor}`))).toBe(true);
    await withTools(project.root, async ({ call }) => {
      await call("add_component", {
        ref: led,
        lib_id: "Device:LED",
        value: "LED",
        footprint: "LED_SMD:LED_0603_1608Metric",
        near: target.ic,
        connect: { A: "PWR_LED", K: target.ground },
      });
      await call("add_component", {
        ref: resistor,
        lib_id: "Device:R",
        value: "1k",
        footprint: "Resistor_SMD:R_0603_1608Metric",
        near: led,
        connect: { "1": target.supply, "2": "PWR_LED" },
      });
      await call("sync_board");
    });
    // The capacitor is still the one left for layout: no new track made it part of an island
    // with the resistor, which reaches the supply's own copper or is left for layout itself.
    const after = await unconnected();
    expect(after.filter((k) => k.includes(`of ${capacitor}`))).toEqual(
      before.filter((k) => k.includes(`of ${capacitor}`)),
    );
    expect(after.filter((k) => !before.includes(k)).every((k) => k.includes(`of ${resistor}`))).toBe(true);
  }, 300_000);
});
