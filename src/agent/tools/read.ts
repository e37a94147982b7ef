/**
 * Read tools, available in every phase: what the design and its docs say right now. They
 * never write, so a model that explores before proposing can do no harm.
 */
import * as v from "valibot";
import { compareWithBaseline } from "../../checks/baseline.ts";
import { familyVerdict } from "../../checks/result.ts";
import type { CheckResult, Finding, Severity } from "../../checks/types.ts";
import { missingDesignLibraries } from "../../design/library-uses.ts";
import type { Board } from "../../kicad/board/model.ts";
import type { Component } from "../../kicad/netlist/components.ts";
import { designSymbols, searchLibraries, type LibraryHit } from "../../kicad/library/search.ts";
import { resolveNet } from "../../kicad/netlist/net-names.ts";
import { naturalCompare } from "../../util/natural-compare.ts";
import { child, children, text } from "../../kicad/sexpr/index.ts";
import { closeMatches } from "../../util/close-matches.ts";
import { currentDesign, unchangedByRun, type RunContext } from "../context.ts";
import { readRepoDoc } from "../../repo/repo-files.ts";
import { symbolLayout } from "../view/sheet-view.ts";
import { docPath } from "./paths.ts";
import { defineTool, toolCall, ToolError } from "./tool.ts";

/** Findings returned to the model per page, so one noisy family cannot flood the context. */
const MAX_FINDINGS = 40;

/** Pins listed as a pin's neighbours before the rest are counted: a ground net has hundreds. */
const MAX_NEIGHBOURS = 8;

const filterText = (what: string) =>
  v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200), v.description(what)));

/** What `list_components` can narrow the list by. */
const ComponentFilter = {
  ref_prefix: filterText("References starting with this, e.g. LED or R"),
  value: filterText("Value contains this, e.g. 10k"),
  lib_id: filterText("Library id contains this, e.g. Device:LED"),
  footprint: filterText("Footprint contains this, e.g. 0603"),
  sheet: filterText("Sheet path contains this, e.g. /Power/"),
  attribute: v.optional(
    v.pipe(
      v.picklist(["dnp", "fitted", "in_bom", "not_in_bom", "on_board", "not_on_board"]),
      v.description("Parts with this attribute (dnp, fitted = not DNP, …)"),
    ),
  ),
};

export const readTools = [
  defineTool({
    name: "read_doc",
    effect: "read",
    description:
      "Read a markdown file under the docs folder (e.g. SPEC.md, BOM.md, DECISIONS.md). Returns its text with line numbers.",
    schema: v.strictObject({
      path: v.pipe(v.string(), v.description("Path relative to the docs folder, e.g. SPEC.md")),
    }),
    run(ctx: RunContext, { path }) {
      const rel = docPath(ctx, path);
      const text = readRepoDoc(ctx.repoRoot, rel);
      if (text === undefined) throw new ToolError(`${rel} does not exist`);
      return {
        path: rel,
        text: text
          .split("\n")
          .map((line, i) => `${String(i + 1).padStart(4)}  ${line}`)
          .join("\n"),
      };
    },
  }),
  defineTool({
    name: "list_components",
    effect: "read",
    description:
      "List components: reference, value, footprint, library id, sheet, and whether it is on the board and in the BOM. Filters narrow the list (all must match; text filters are case-insensitive substrings): ref_prefix (e.g. LED, R), value, lib_id, footprint, sheet, attribute.",
    schema: v.strictObject(ComponentFilter),
    run(ctx: RunContext, filter) {
      return currentDesign(ctx)
        .components.filter(componentMatches(filter))
        .map((c) => ({
          ref: c.ref,
          value: c.value,
          footprint: c.footprint,
          libId: c.libId,
          sheet: c.sheet,
          onBoard: c.onBoard,
          inBom: c.inBom,
          ...(c.dnp ? { dnp: true } : {}),
        }));
    },
  }),
  defineTool({
    name: "get_component",
    effect: "read",
    description:
      "One component in detail: all fields and attributes, where each unit is drawn (sheet, position in sheet mm, rotation, mirror, body box, and every field's place, size, visibility and reading direction), its board footprint (library id, position in mm, rotation, side, lock; null when it has none on the board), and every pin with its name, type, the net it is on and the other pins on that net (neighbours, e.g. R5.2; the first few of a large net, with how many more).",
    schema: v.strictObject({ ref: v.pipe(v.string(), v.minLength(1)) }),
    run(ctx: RunContext, { ref }) {
      const design = currentDesign(ctx);
      const c = design.components.find((x) => x.ref === ref);
      if (!c)
        throw new ToolError(
          unknownRef(
            ref,
            design.components.map((x) => x.ref),
          ),
        );
      const pins = design.netlist.nets.flatMap((net) =>
        net.nodes
          .filter((n) => n.ref === ref)
          .map((n) => ({
            pin: n.pin,
            name: n.pinfunction ?? "",
            type: n.pintype ?? "",
            net: net.name,
            ...neighbours(net.nodes, ref),
          })),
      );
      return {
        ref,
        libId: c.libId,
        sheet: c.sheet,
        fields: c.fields,
        onBoard: c.onBoard,
        inBom: c.inBom,
        dnp: c.dnp,
        excludeFromSim: c.symbols.some((s) => s.excludeFromSim),
        schematic: symbolLayout(design, ref),
        board: design.board ? boardState(design.board, c) : undefined,
        pins: pins.sort((a, b) => naturalCompare(a.pin, b.pin)),
      };
    },
  }),
  defineTool({
    name: "list_nets",
    effect: "read",
    description: "List every net with its number of pins.",
    schema: v.strictObject({}),
    run(ctx: RunContext) {
      return currentDesign(ctx).netlist.nets.map((n) => ({ name: n.name, pins: n.nodes.length }));
    },
  }),
  defineTool({
    name: "get_net",
    effect: "read",
    description: "The pins on one net (reference, pin number, pin name, pin type).",
    schema: v.strictObject({ name: v.pipe(v.string(), v.minLength(1)) }),
    run(ctx: RunContext, { name }) {
      const nets = currentDesign(ctx).netlist.nets;
      const resolved = toolCall(() =>
        resolveNet(
          nets.map((n) => n.name),
          name,
        ),
      );
      return nets.find((n) => n.name === resolved)!;
    },
  }),
  defineTool({
    name: "search_library",
    effect: "read",
    description:
      "Search the symbols the design already embeds (source: design), the footprints its board carries from libraries no table holds (source: board), and the project's and KiCad's symbol and footprint libraries, by words (all must match the id, description or keywords). Returns library ids for add_component and Footprint fields, and names the design's libraries that are missing from the library tables: their parts can still be used by name (add_component like or lib_id; sync_board takes the board's copy of the footprint).",
    schema: v.strictObject({
      query: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
      kind: v.optional(v.picklist(["symbol", "footprint"])),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50))),
    }),
    run(ctx: RunContext, { query, kind, limit }) {
      const design = currentDesign(ctx);
      const missing = missingDesignLibraries(ctx.libraries, design.schematic, design.board);
      const absent = new Set(missing.filter((m) => m.kind === "footprint").map((m) => m.nickname));
      const board = [...new Set((design.board?.footprints() ?? []).map((f) => f.libId))]
        .filter((libId) => absent.has(libId.slice(0, libId.indexOf(":"))))
        .map((libId): LibraryHit => ({ kind: "footprint", libId, description: "", keywords: "" }));
      const results = searchLibraries(ctx.libraries, query, {
        kind,
        limit,
        design: designSymbols(design.schematic.files.values()),
        board,
      });
      if (missing.length === 0) return { results };
      return {
        results,
        missingLibraries: missing.map((m) => ({
          kind: m.kind,
          library: m.nickname,
          symbols: m.symbols,
          footprints: m.footprints,
        })),
        note: `${missing.length === 1 ? "This library the design uses is" : "These libraries the design uses are"} in no library table, so the table search cannot find their parts. Their symbols are embedded in the design (source: design) and their footprints are on the board (source: board): use them by name (add_component like a part that has one, or lib_id; a Footprint field); sync_board places the board's copy of the footprint.`,
      };
    },
  }),
  defineTool({
    name: "get_library_symbol",
    effect: "read",
    description:
      "A library symbol's pins (number, name, electrical type, unit) and fields, to plan connections before adding it.",
    schema: v.strictObject({ libId: v.pipe(v.string(), v.regex(/^[^:]+:.+$/, "use Library:Symbol")) }),
    run(ctx: RunContext, { libId }) {
      return describeLibrarySymbol(ctx, libId);
    },
  }),
  defineTool({
    name: "run_check",
    effect: "read",
    description:
      'Run the full deterministic check (ERC, DRC, parity, routing, drift, requirements, proposals) on the design as it is now. Returns each check\'s status and one page of findings (filter by check and severity; page with offset), new ones first, each marked baseline: new (not there before the run) or unchanged, with where it is (sheet or board layer, x, y in mm) and the parts it involves. only: "new" lists just what the run added, the findings the Verification line counts as new; ok then answers for the findings asked for.',
    schema: v.strictObject({
      check: v.optional(v.pipe(v.string(), v.description("Only this check's findings, e.g. erc, drc, routing"))),
      severity: v.optional(v.picklist(["error", "warning", "info"])),
      only: v.optional(
        v.pipe(v.picklist(["new"]), v.description("new: only findings that were not there before the run")),
      ),
      offset: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
      limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_FINDINGS * 5))),
    }),
    async run(ctx: RunContext, { check, severity, only, offset = 0, limit = MAX_FINDINGS }) {
      const [report, baseline] = await Promise.all([ctx.check(), ctx.baseline?.()]);
      if (only === "new" && !baseline)
        throw new ToolError(
          'There is no baseline to tell new findings from: run_check without only: "new" lists them all.',
        );
      const comparison = baseline ? compareWithBaseline(baseline, report, false, unchangedByRun(ctx)) : undefined;
      // Rows of the generated docs are regenerated before verification: not the model's to fix.
      const [regenerated, own] = partition(
        comparison?.current ?? report.checks.flatMap((c) => c.findings),
        isRegeneratedRow,
      );
      const asked = own.filter(
        (f) =>
          (!check || f.check === check) &&
          (!severity || f.severity === severity) &&
          (!only || f.baselineState === "new"),
      );
      // New findings first, so the first page holds what the run added however long the baseline's list.
      const [fresh, old] = partition(asked, (f) => f.baselineState === "new");
      const all = [...fresh, ...old];
      const page = all
        .slice(offset, offset + limit)
        .map(({ baselineState, ...f }) => ({ ...f, baseline: baselineState ?? "unknown" }));
      const count = (severity: Severity) => own.filter((f) => f.severity === severity).length;
      const filtered = check !== undefined || severity !== undefined || only !== undefined;
      const fails = (f: Finding) => f.severity === "error" || (report.strict && f.severity === "warning");
      return {
        ok: filtered ? !all.some(fails) : report.ok || (regenerated.length > 0 && count("error") === 0),
        counts: { error: count("error"), warning: count("warning"), info: count("info") },
        checks: report.checks.map((c) => familyView(c, own, regenerated, report.strict)),
        findings: page,
        offset,
        total: all.length,
        ...(comparison ? { new: fresh.length, baseline: old.length } : {}),
        ...(offset + page.length < all.length ? { nextOffset: offset + page.length } : {}),
        ...(comparison ? { newErrors: comparison.failing.filter((f) => !isRegeneratedRow(f)).length } : {}),
        ...(regenerated.length > 0
          ? {
              regeneratedAtFinish: `${regenerated.length} row(s) of the generated BOM.md/PINOUT.md differ from the design as it is now; copperhead regenerates them before verification, so leave them be`,
            }
          : {}),
      };
    },
  }),
];

/**
 * One family as the model sees it: status, summary and finding count all from the findings the
 * model owns, so they never disagree; rows left to regeneration are a note with their count.
 */
function familyView(c: CheckResult, own: Finding[], regenerated: Finding[], strict: boolean) {
  const mine = own.filter((f) => f.check === c.id);
  const left = regenerated.filter((f) => f.check === c.id).length;
  if (left === 0) return { id: c.id, status: c.status, summary: c.summary, findings: mine.length };
  const note = `${left} generated-doc row(s) differ from the design; copperhead regenerates them before verification`;
  return { id: c.id, ...familyVerdict(mine, { strict }), findings: mine.length, note };
}

function componentMatches(filter: { [K in keyof typeof ComponentFilter]?: string }): (c: Component) => boolean {
  const has = (text: string, part: string | undefined) =>
    part === undefined || text.toLowerCase().includes(part.toLowerCase());
  const attribute: Record<string, (c: Component) => boolean> = {
    dnp: (c) => c.dnp,
    fitted: (c) => !c.dnp,
    in_bom: (c) => c.inBom,
    not_in_bom: (c) => !c.inBom,
    on_board: (c) => c.onBoard,
    not_on_board: (c) => !c.onBoard,
  };
  return (c) =>
    (filter.ref_prefix === undefined || c.ref.toUpperCase().startsWith(filter.ref_prefix.toUpperCase())) &&
    has(c.value, filter.value) &&
    has(c.libId, filter.lib_id) &&
    has(c.footprint, filter.footprint) &&
    has(c.sheet, filter.sheet) &&
    (filter.attribute === undefined || attribute[filter.attribute]!(c));
}

/** "no component LED1; similar: LED_ACT1, PWR_LED1": the nearest references, never the whole list. */
function unknownRef(ref: string, refs: string[]): string {
  const close = closeMatches(ref, refs);
  if (close.length > 0) return `no component ${ref}; similar: ${close.join(", ")}`;
  return `no component ${ref}, nor any reference like it (${refs.length} parts); list_components with ref_prefix, value or lib_id finds parts`;
}

/** The other pins on a pin's net, so tracing a part's neighbour is one call. */
function neighbours(
  nodes: { ref: string; pin: string }[],
  ref: string,
): { neighbours: string[]; moreNeighbours?: number } {
  const others = nodes.filter((n) => n.ref !== ref).map((n) => `${n.ref}.${n.pin}`);
  const shown = others.slice(0, MAX_NEIGHBOURS);
  return {
    neighbours: shown,
    ...(others.length > shown.length ? { moreNeighbours: others.length - shown.length } : {}),
  };
}

/** A drift finding about a row of a generated doc (not its broken table, which a person mends). */
function isRegeneratedRow(f: Finding): boolean {
  return /^drift:(?:bom|pinout):/.test(f.key) && !f.key.endsWith(":table");
}

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  return [items.filter(test), items.filter((item) => !test(item))];
}

/** Where a component's footprint is on the board, or null when the board has none for it. */
function boardState(board: Board, c: Component) {
  const fp = board.footprints().find((f) => f.path === c.symbolPath) ?? board.footprints().find((f) => f.ref === c.ref);
  if (!fp) return null;
  return {
    footprint: fp.libId,
    x: fp.at.x,
    y: fp.at.y,
    rotation: fp.at.rotation,
    side: fp.layer.startsWith("B.") ? "back" : "front",
    locked: fp.locked,
    attributes: fp.attributes,
  };
}

function describeLibrarySymbol(ctx: RunContext, libId: string) {
  const embedded = [...currentDesign(ctx).schematic.files.values()].map((f) => f.libSymbols.get(libId)).find(Boolean);
  const symbol = embedded ? embedded.node : toolCall(() => ctx.libraries.resolveSymbol(libId));
  const fields = Object.fromEntries(children(symbol, "property").map((p) => [text(p, 1) ?? "", text(p, 2) ?? ""]));
  const pins = children(symbol, "symbol").flatMap((unit) => {
    const unitNumber = Number(/_(\d+)_\d+$/.exec(text(unit, 1) ?? "")?.[1] ?? 0);
    return children(unit, "pin").map((pin) => ({
      number: text(child(pin, "number") ?? pin, 1) ?? "",
      name: text(child(pin, "name") ?? pin, 1) ?? "",
      type: text(pin, 1) ?? "",
      unit: unitNumber,
    }));
  });
  return { libId, fields, pins: pins.sort((a, b) => naturalCompare(a.number, b.number)) };
}
