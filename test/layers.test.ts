/**
 * The layers of `src/` import only downward (see ARCHITECTURE.md):
 *
 *   errors/log → repo, util → kicad → design → spec → checks, diff → config → agent → run → commands → mcp → cli
 *
 * A module may import its own layer and the layers below it, never one above, and no chain of
 * imports may lead back to where it started. This test reads every import in `src/` (static,
 * dynamic and `export … from`, type-only ones included: they couple modules just the same) and
 * lists each edge that breaks the order, and each cycle.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";

const SRC = resolve(import.meta.dir, "../src");

/** Bottom first. A file's layer is its first folder under `src/` (or its name, at the top). */
const LAYERS: string[][] = [
  ["errors.ts", "log.ts", "redact.ts", "version.ts", "visible.ts", "types"],
  ["repo", "util"],
  ["kicad"],
  ["design"],
  ["spec"],
  // Each compares something with the design: the check families, and the diff of two states.
  ["checks", "diff"],
  ["config"],
  ["agent"],
  ["run"],
  ["commands"],
  // The MCP server serialises command results; the CLI hosts it as `copperhead mcp`.
  ["mcp"],
  ["cli"],
  ["main.ts"],
];

const RANK = new Map(LAYERS.flatMap((names, rank) => names.map((name) => [name, rank] as const)));

/**
 * Inside `kicad/`, the documents, bottom first (see ARCHITECTURE.md). A file belongs to the
 * longest unit its path starts with. Units in one row are peers that never import each other:
 * the board reads the schematic's views and the netlist, never the schematic editor.
 */
const KICAD_UNITS: string[][] = [
  ["kicad/sexpr", "kicad/cli", "kicad/format-versions.ts", "kicad/uuids.ts", "kicad/stroke-font.ts"],
  ["kicad/library"],
  ["kicad/schematic"],
  ["kicad/netlist"],
  ["kicad/proposal-scope.ts"],
  ["kicad/schematic/edit", "kicad/board"],
];

const KICAD_RANK = new Map(KICAD_UNITS.flatMap((units, rank) => units.map((unit) => [unit, rank] as const)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

function rel(file: string): string {
  return relative(SRC, file).split(sep).join("/");
}

function layerOf(file: string): string {
  return rel(file).split("/")[0]!;
}

/** Every file under `src/` this file imports. Packages and files outside `src/` are not layers. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles
    .map((ref) => ref.fileName)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => resolve(dirname(file), spec))
    .filter((target) => target.startsWith(SRC + sep) && target.endsWith(".ts"));
}

const files = sourceFiles(SRC);
const graph = new Map(files.map((file) => [file, importsOf(file)]));

/** Each import that points to a higher layer, as a sentence naming both ends. */
function upwardEdges(graph: Map<string, string[]>): string[] {
  const upward: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const [from, to] = [layerOf(file), layerOf(target)];
      if ((RANK.get(to) ?? -1) > (RANK.get(from) ?? Infinity))
        upward.push(`${rel(file)} (${from}) imports ${rel(target)} (${to}), a layer above it`);
    }
  }
  return upward.sort();
}

/** The `kicad/` unit a file belongs to: the longest listed prefix of its path, or undefined. */
function kicadUnitOf(file: string): string | undefined {
  const path = rel(file);
  const units = [...KICAD_RANK.keys()].filter((unit) => path === unit || path.startsWith(unit + "/"));
  return units.sort((a, b) => b.length - a.length)[0];
}

/** Each import inside `kicad/` to another unit of its own rank or above, as a sentence. */
function kicadEdges(graph: Map<string, string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    const from = kicadUnitOf(file);
    if (from === undefined) continue;
    for (const target of targets) {
      const to = kicadUnitOf(target);
      if (to === undefined || to === from) continue;
      if (KICAD_RANK.get(to)! >= KICAD_RANK.get(from)!)
        wrong.push(`${rel(file)} (${from}) imports ${rel(target)} (${to}), which is not below it`);
    }
  }
  return wrong.sort();
}

/**
 * What `run/` may take from `agent/`: the tools it hands the model and the loop that runs them,
 * with the loop's own parts (the run's context, the model interface, the history's budget,
 * progress events, the transcript). What judges a result (the gate) and what edits a design
 * (the board services) belong to `run/` and `kicad/`, not to the model's side.
 */
const RUN_USES_OF_AGENT = [
  "agent/tools/",
  "agent/loop.ts",
  "agent/context.ts",
  "agent/conversation.ts",
  "agent/history.ts",
  "agent/progress.ts",
  "agent/transcript.ts",
];

/** Each import from `run/` into `agent/` beyond the tools and the loop, as a sentence. */
function runIntoAgent(graph: Map<string, string[]>): string[] {
  const wrong: string[] = [];
  for (const [file, targets] of graph) {
    if (layerOf(file) !== "run") continue;
    for (const target of targets) {
      const path = rel(target);
      if (
        layerOf(target) === "agent" &&
        !RUN_USES_OF_AGENT.some((allowed) => (allowed.endsWith("/") ? path.startsWith(allowed) : path === allowed))
      ) {
        wrong.push(`${rel(file)} imports ${path}, which is neither a tool nor the loop`);
      }
    }
  }
  return wrong.sort();
}

/** Strongly connected components with more than one file, or a file that imports itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) === index.get(file)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      if (component.length > 1 || (graph.get(file) ?? []).includes(file)) found.push(component.map(rel).sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

describe("src/ layers", () => {
  test("the import graph is read (sanity: known edges are seen)", () => {
    expect(files.length).toBeGreaterThan(50);
    expect(graph.get(join(SRC, "main.ts"))).toContain(join(SRC, "cli/run.ts"));
    for (const targets of graph.values()) for (const target of targets) expect(existsSync(target)).toBe(true);
  });

  test("every file belongs to a layer", () => {
    const unplaced = files.map(rel).filter((file) => !RANK.has(file.split("/")[0]!));
    // A new top-level folder needs its place in LAYERS (and in ARCHITECTURE.md).
    expect(unplaced).toEqual([]);
  });

  test("the checks find an upward edge and a cycle when there is one", () => {
    const at = (file: string) => join(SRC, file);
    const broken = new Map([
      [at("agent/loop.ts"), [at("cli/output.ts"), at("agent/model.ts")]],
      [at("agent/model.ts"), [at("agent/loop.ts")]],
      [at("cli/output.ts"), [at("errors.ts")]],
    ]);
    expect(upwardEdges(broken)).toEqual(["agent/loop.ts (agent) imports cli/output.ts (cli), a layer above it"]);
    expect(cycles(broken)).toEqual([["agent/loop.ts", "agent/model.ts"]]);
  });

  test("every file of kicad/ belongs to a document's unit", () => {
    const unplaced = files.filter((file) => layerOf(file) === "kicad" && kicadUnitOf(file) === undefined).map(rel);
    // A new folder or root file in kicad/ needs its place in KICAD_UNITS (and in ARCHITECTURE.md).
    expect(unplaced).toEqual([]);
  });

  test("the kicad/ check finds an edge to a peer or a unit above", () => {
    const at = (file: string) => join(SRC, file);
    const broken = new Map([
      [
        at("kicad/board/placement.ts"),
        [at("kicad/schematic/edit/editor.ts"), at("kicad/schematic/model/hierarchy.ts")],
      ],
      [at("kicad/cli/kicad-cli.ts"), [at("kicad/board/model.ts")]],
      [at("kicad/schematic/model/hierarchy.ts"), [at("kicad/sexpr/index.ts"), at("kicad/schematic/geometry.ts")]],
    ]);
    expect(kicadEdges(broken)).toEqual([
      "kicad/board/placement.ts (kicad/board) imports kicad/schematic/edit/editor.ts (kicad/schematic/edit), which is not below it",
      "kicad/cli/kicad-cli.ts (kicad/cli) imports kicad/board/model.ts (kicad/board), which is not below it",
    ]);
  });

  test("inside kicad/, each document imports only the documents below it", () => {
    expect(kicadEdges(graph)).toEqual([]);
  });

  test("the run check finds a run/ module reaching into agent/ beyond the tools and the loop", () => {
    const at = (file: string) => join(SRC, file);
    const broken = new Map([
      [at("run/verify.ts"), [at("agent/prompt.ts"), at("agent/tools/read.ts"), at("agent/loop.ts")]],
    ]);
    expect(runIntoAgent(broken)).toEqual([
      "run/verify.ts imports agent/prompt.ts, which is neither a tool nor the loop",
    ]);
  });

  test("run/ takes from agent/ only the tools and the loop", () => {
    expect(runIntoAgent(graph)).toEqual([]);
  });

  test("the moved modules are where their layer says", () => {
    // The gate judges a run's result (run/); the board services edit a board (kicad/board/).
    for (const [file, layer] of [
      ["run/gate.ts", "run"],
      ["kicad/board/sync/update.ts", "kicad/board"],
      ["kicad/board/route/layout-report.ts", "kicad/board"],
      ["kicad/netlist/parts.ts", "kicad/netlist"],
    ] as const) {
      expect(existsSync(join(SRC, file))).toBe(true);
      expect(layer.startsWith("kicad/") ? kicadUnitOf(join(SRC, file)) : layerOf(join(SRC, file))).toBe(layer);
    }
    expect(existsSync(join(SRC, "agent/gate.ts"))).toBe(false);
  });

  test("no module imports a layer above its own", () => {
    expect(upwardEdges(graph)).toEqual([]);
  });

  test("no chain of imports leads back to where it started", () => {
    // Each entry lists the files of one cycle; break it by moving what they share down a layer.
    expect(cycles(graph)).toEqual([]);
  });
});
