/**
 * Edit tools, unlocked after the proposal is approved. Each is a structured operation on the
 * lossless tree — never raw text — and every file it changes is written through the run's
 * journal, so a failed run restores those bytes exactly. Each says which parts and nets it
 * changes, and inside a run it is refused, before anything is written, when the approved
 * proposal does not name them (scope.ts).
 */
import * as v from "valibot";
import { reportLayout } from "../../kicad/board/route/layout-report.ts";
import { assertCanRefill } from "../../kicad/board/zones/refill.ts";
import type { SchematicEditor } from "../../kicad/schematic/edit/editor.ts";
import { checkVisibleName } from "../../kicad/schematic/edit/lookup.ts";
import { repoRelative } from "../../repo/repo-path.ts";
import { forgetDesign, runBoardEditor, runEditor, runJournal, saveBoard, type RunContext } from "../context.ts";
import { boardEditorOf, routeTool, setBoardFlag, syncBoardTool } from "./board.ts";
import { docEditTool } from "./docs.ts";
import { enforceScope, type Touches } from "./scope.ts";
import { defineTool, toolCall, ToolError } from "./tool.ts";

const name = (max = 100) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));

/** Said in every confined tool's description: what the model may touch, and the way to more. */
const CONFINED =
  " Only for parts and nets the approved proposal names; anything else is refused as out of scope (amend_proposal adds to it).";

/**
 * Runs one schematic operation of `tool` on the run's editor and writes the sheets it changed
 * through the journal; typed errors become tool errors. The call is held to the proposal twice:
 * by what its arguments name (`touches`), before it runs, and by what its result shows it made
 * (`made`: the references a new part got), before anything is written. A call that fails
 * leaves the editor's trees, and so the files, as they were before it.
 */
function editSchematic<T>(
  ctx: RunContext,
  tool: string,
  touches: Touches,
  operation: (editor: SchematicEditor) => T,
  made?: (result: T) => Touches,
): T {
  const editor = toolCall(() => runEditor(ctx));
  const nets = () => editor.netlist().nets.map((n) => n.name);
  enforceScope(ctx, tool, touches, nets);
  const result = toolCall(() =>
    editor.attempt(() => {
      const result = operation(editor);
      if (made) enforceScope(ctx, tool, made(result), nets);
      return result;
    }),
  );
  const journal = runJournal(ctx);
  try {
    editor.save((file, bytes) => journal.writeFile(repoRelative(ctx.repoRoot, file), bytes));
  } catch (err) {
    // Some sheets may be written and some not: read the files again from the next call on.
    forgetDesign(ctx);
    throw err;
  }
  return result;
}

export const editTools = [
  defineTool({
    name: "add_component",
    effect: "edit",
    description:
      "Add a part from the libraries or the design's own symbols (lib_id), or another one like an existing part (like: its symbol, footprint and fields), next to the part or net it belongs with (near; by default the part it shares the most connect nets with), on that part's sheet, in free space on the sheet's grid, inside the block drawn round that part when one fits it (block and note in the result say when not), or at a given origin (at, checked like move_symbol). With connect ({pin: net}) its pins are wired at once and it is turned so supply pins face up and ground and negative-rail pins down; power symbols are the design's own, numbered and shown as its others. Returns its reference, pins, position and the gap to what it was placed near." +
      CONFINED,
    schema: v.strictObject({
      lib_id: v.optional(v.pipe(v.string(), v.regex(/^[^:]+:.+$/, "use Library:Symbol, e.g. Device:C"))),
      like: v.optional(
        v.pipe(
          name(),
          v.description(
            "An existing part to copy: its symbol, footprint and fields (MPN, manufacturer), shown and sized as on it but laid out beside the new body; other arguments override",
          ),
        ),
      ),
      value: v.optional(name(200)),
      footprint: v.optional(v.pipe(v.string(), v.regex(/^[^:]+:.+$/, "use Library:Footprint"))),
      fields: v.optional(v.record(name(60), v.pipe(v.string(), v.maxLength(500)))),
      near: v.optional(
        v.pipe(
          name(200),
          v.description(
            "A reference (U1) or net (+3V3, DATA) to place it next to; its sheet is used unless sheet is given (then a part on another sheet is its neighbour on the board only)",
          ),
        ),
      ),
      connect: v.optional(
        v.pipe(
          v.record(name(), name(200)),
          v.description('Pins to wire at once, pin number or name -> net, e.g. {"1": "+3V3", "2": "GND"}'),
        ),
      ),
      sheet: v.optional(
        v.pipe(
          v.string(),
          v.description('Human sheet path, e.g. "/" or "/Regulator/" (default: the sheet of near, else "/")'),
        ),
      ),
      ref: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z#]+\d+$/))),
      rotation: v.optional(v.picklist([0, 90, 180, 270])),
      at: v.optional(
        v.pipe(
          v.tuple([v.number(), v.number()]),
          v.description(
            "The symbol's origin, mm, instead of a spot next to near: checked like move_symbol (drawing, fields and wiring clear); find_space with lib_id gives one that fits",
          ),
        ),
      ),
    }),
    run(ctx: RunContext, a) {
      if (a.ref) checkVisibleName("reference", a.ref);
      // Its placement anchor (near) and the part it copies (like) are only read.
      const touches = { refs: a.ref ? [a.ref] : [], nets: Object.values(a.connect ?? {}) };
      const reserved = runBoardEditor(ctx)
        ?.board.footprints()
        .map((f) => f.ref);
      const added = editSchematic(
        ctx,
        "add_component",
        touches,
        (e) =>
          e.addComponent({
            libId: a.lib_id,
            like: a.like,
            value: a.value,
            footprint: a.footprint,
            fields: a.fields,
            sheet: a.sheet,
            ref: a.ref,
            near: a.near,
            connect: a.connect,
            rotation: a.rotation,
            at: a.at,
            reserved,
          }),
        (result) => ({ refs: result.refs }),
      );
      if (added.near) (ctx.placementAnchors ??= new Map()).set(added.ref, added.near);
      return added;
    },
  }),
  defineTool({
    name: "add_sheet",
    effect: "edit",
    description:
      "Add a hierarchical sheet for a subcircuit that has no room on its sheet: a new .kicad_sch beside the root (file), its symbol on the parent sheet (default /) at the free spot nearest the nets it carries or at a given corner (at), and for each net it carries a hierarchical label inside and a pin on the symbol, wired to the net on the parent as connect wires a pin (a net the design does not have yet becomes a new net of the parent). Then place the parts on it with add_component (sheet: the returned path) and connect them to the carried nets by name. Returns its path, file, page, position, size and pins." +
      CONFINED,
    schema: v.strictObject({
      name: v.pipe(name(64), v.description("The sheet's name, shown on its symbol and in its path (/Name/)")),
      file: v.pipe(name(110), v.description("The new file's name beside the root schematic, e.g. eeprom.kicad_sch")),
      parent: v.optional(v.pipe(v.string(), v.description('Human path of the sheet its symbol goes on (default "/")'))),
      nets: v.pipe(
        v.array(name(200)),
        v.minLength(1),
        v.maxLength(40),
        v.description('The nets it shares with the parent, e.g. ["+3V3", "GND", "SDA"]'),
      ),
      at: v.optional(
        v.pipe(
          v.tuple([v.number(), v.number()]),
          v.description("The symbol's top-left corner, mm, instead of the free spot nearest its nets (checked free)"),
        ),
      ),
    }),
    run(ctx: RunContext, a) {
      for (const net of a.nets) checkVisibleName("net name", net);
      return editSchematic(ctx, "add_sheet", { nets: a.nets }, (e) =>
        e.addSheet({ name: a.name, file: a.file, parent: a.parent, nets: a.nets, at: a.at }),
      );
    },
  }),
  defineTool({
    name: "move_symbol",
    effect: "edit",
    description:
      "Move a symbol on its sheet next to a part or net (near: the nearest free spot, as add_component finds one) or to at [x, y] mm (checked free), optionally turned (rotation). Wiring that serves only its pins moves along; pins wired into a larger net are reconnected to it by name at the new place; refused if a net would change." +
      CONFINED,
    schema: v.strictObject({
      ref: name(),
      near: v.optional(name(200)),
      at: v.optional(v.tuple([v.number(), v.number()])),
      rotation: v.optional(v.picklist([0, 90, 180, 270])),
      unit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    }),
    run(ctx: RunContext, { ref, ...args }) {
      return editSchematic(ctx, "move_symbol", { refs: [ref] }, (e) => e.moveSymbol(ref, args));
    },
  }),
  defineTool({
    name: "remove_component",
    effect: "edit",
    description:
      "Remove a component (all units) and the wire stubs and labels that served only its pins; refused if other pins' nets would change." +
      CONFINED,
    schema: v.strictObject({ ref: name() }),
    run(ctx: RunContext, { ref }) {
      editSchematic(ctx, "remove_component", { refs: [ref] }, (e) => e.removeComponent(ref));
      return { removed: ref };
    },
  }),
  defineTool({
    name: "set_field",
    effect: "edit",
    description:
      "Set a field of a component: Value, Footprint, MPN, Datasheet or any other (added hidden when missing)." +
      CONFINED,
    schema: v.strictObject({ ref: name(), field: name(60), value: v.pipe(v.string(), v.maxLength(500)) }),
    run(ctx: RunContext, { ref, field, value }) {
      // Setting the Reference renumbers the part: the new reference is touched too. A hidden
      // character in it is refused before the scope check would ask for an amendment.
      if (field.toLowerCase() === "reference") checkVisibleName("reference", value);
      editSchematic(ctx, "set_field", { refs: field.toLowerCase() === "reference" ? [ref, value] : [ref] }, (e) =>
        e.setField(ref, field, value),
      );
      return { ref, field, value };
    },
  }),
  defineTool({
    name: "set_attribute",
    effect: "edit",
    description:
      "Set a component's attributes on every unit: dnp (do not populate), exclude_from_bom, exclude_from_board (sync_board then removes its footprint), exclude_from_sim; and on its board footprint, exclude_from_pos_files (left out of the pick-and-place file; KiCad keeps this one on the footprint only, so the part must be on the board). Omitted attributes keep their value." +
      CONFINED,
    schema: v.strictObject({
      ref: name(),
      dnp: v.optional(v.boolean()),
      exclude_from_bom: v.optional(v.boolean()),
      exclude_from_board: v.optional(v.boolean()),
      exclude_from_sim: v.optional(v.boolean()),
      exclude_from_pos_files: v.optional(v.boolean()),
    }),
    run(ctx: RunContext, args) {
      const { ref, dnp, exclude_from_bom, exclude_from_board, exclude_from_sim, exclude_from_pos_files } = args;
      const attributes = {
        dnp,
        excludeFromBom: exclude_from_bom,
        excludeFromBoard: exclude_from_board,
        excludeFromSim: exclude_from_sim,
      };
      const onSymbol = Object.values(attributes).some((a) => a !== undefined);
      if (!onSymbol && exclude_from_pos_files === undefined) {
        throw new ToolError(
          "name at least one attribute to set (dnp, exclude_from_bom, exclude_from_board, exclude_from_sim, exclude_from_pos_files)",
        );
      }
      enforceScope(ctx, "set_attribute", { refs: [ref] }, () => []);
      // Found before anything is written, so a part with no footprint changes nothing at all.
      const saveBoard =
        exclude_from_pos_files === undefined
          ? undefined
          : setBoardFlag(ctx, ref, "exclude_from_pos_files", exclude_from_pos_files);
      if (onSymbol) editSchematic(ctx, "set_attribute", { refs: [ref] }, (e) => e.setAttributes(ref, attributes));
      saveBoard?.();
      const { ref: _ref, ...set } = args;
      return { ref, ...Object.fromEntries(Object.entries(set).filter(([, value]) => value !== undefined)) };
    },
  }),
  defineTool({
    name: "connect",
    effect: "edit",
    description:
      "Connect a pin (by number or name) to a net by name, in the sheet's style: a short wire to a nearby pin or label of the net when the way is free, else a wire stub and label, or an upright power symbol for power nets. A net nothing names (Net-(…)) is joined by a wire alone: place the part near its pins." +
      CONFINED,
    schema: v.strictObject({ ref: name(), pin: name(), net: name(200) }),
    run(ctx: RunContext, { ref, pin, net }) {
      editSchematic(ctx, "connect", { refs: [ref], nets: [net] }, (e) => e.connect(ref, pin, net));
      return { ref, pin, net };
    },
  }),
  defineTool({
    name: "disconnect",
    effect: "edit",
    description:
      "Disconnect a pin from whatever it is wired to (only the segment that ends at the pin); refused if other pins' nets would change." +
      CONFINED,
    schema: v.strictObject({ ref: name(), pin: name() }),
    run(ctx: RunContext, { ref, pin }) {
      editSchematic(ctx, "disconnect", { refs: [ref] }, (e) => e.disconnect(ref, pin));
      return { ref, pin, net: null };
    },
  }),
  defineTool({
    name: "rename_net",
    effect: "edit",
    description:
      "Rename a net by changing the labels or power symbols that name it, on every sheet it runs through. A label whose longer name would run over another item makes room the least way that keeps it readable: read the other way, slid along its wire, moved to the wire's other end, carried out beyond a free end of its wire (the wire lengthened to meet it), put at the end of a new short stub drawn off its wiring (with a junction), or given room by carrying a no-connect flag out with its wire's end, sliding the part or sheet at its wire's end further along the run (its wires stretched and shortened), or opening a gap: pushing what lies ahead of it further the way it reads, or pulling what lies behind it back with it, the wires across the gap stretched (madeRoom in the result says what moved); when none is clear the call says what each way ran into (move_label then places it where you choose)." +
      CONFINED,
    schema: v.strictObject({ from: name(200), to: name(200) }),
    run(ctx: RunContext, { from, to }) {
      checkVisibleName("net name", to);
      const { madeRoom } = editSchematic(ctx, "rename_net", { nets: [from, to] }, (e) => e.renameNet(from, to));
      return { from, to, ...(madeRoom.length > 0 ? { madeRoom } : {}) };
    },
  }),
  defineTool({
    name: "move_label",
    effect: "edit",
    description:
      "Move a label that names a net: to another point (to, [x, y] mm) on a wire of its sheet, or beyond the free end of the wire it sits on, in line with it (the wire is lengthened to meet it; the longer wire must cross nothing). from ([x, y] mm) says which label when the net has several; rotation turns it. Refused with what is in the way when the label would run over another item, and when the nets would change." +
      CONFINED,
    schema: v.strictObject({
      net: name(200),
      to: v.tuple([v.number(), v.number()]),
      from: v.optional(v.tuple([v.number(), v.number()])),
      rotation: v.optional(v.picklist([0, 90, 180, 270])),
    }),
    run(ctx: RunContext, { net, ...args }) {
      return editSchematic(ctx, "move_label", { nets: [net] }, (e) => e.moveLabel(net, args));
    },
  }),
  defineTool({
    name: "mark_no_connect",
    effect: "edit",
    description: "Mark a pin as intentionally unconnected (a no-connect flag)." + CONFINED,
    schema: v.strictObject({ ref: name(), pin: name() }),
    run(ctx: RunContext, { ref, pin }) {
      editSchematic(ctx, "mark_no_connect", { refs: [ref] }, (e) => e.markNoConnect(ref, pin));
      return { ref, pin, noConnect: true };
    },
  }),
  syncBoardTool,
  routeTool,
  defineTool({
    name: "place_footprint",
    effect: "edit",
    description:
      "Move a footprint that is not routed yet, or one this run placed and routed (its tracks and vias from this run are lifted and laid again): next to another part's footprint (near: beside that part's pin it serves, the pin of their shared net with the fewest pads, on either side for a surface-mount passive and at any quarter turn, ranked by the ratsnest to its nets' copper, on the board's grid, preferring one of the best few where its pads can be routed; a spot farther than 10 mm from the pin, or from the part when it serves none of its pins, says so in far, with what fills the nearer ones) or to x, y (mm), optionally turned (rotation) or put on the other side (side: back flips it as KiCad does; a through-hole part changes side only when you ask). Checked against courtyards, other nets' pads, tracks and vias, holes, rule areas, the board edge and silkscreen with the board's own rules; zone fills are refilled afterwards and do not block, but a spot where its pads would cut a pour of another net in two is not free. A refusal names what is in the way. Once placed it is routed and the zones it touches are refilled, as sync_board does; what cannot be routed stays layout pending with its reason." +
      CONFINED,
    schema: v.strictObject({
      ref: name(),
      near: v.optional(name()),
      x: v.optional(v.number()),
      y: v.optional(v.number()),
      rotation: v.optional(v.picklist([0, 90, 180, 270])),
      side: v.optional(v.picklist(["front", "back"])),
    }),
    async run(ctx: RunContext, { ref, ...move }) {
      const editor = boardEditorOf(ctx);
      // The footprint it is placed next to (near) is only read.
      enforceScope(ctx, "place_footprint", { refs: [ref] }, () => []);
      await assertCanRefill(editor.board);
      // A part this run routed moves without its tracks and vias: they are lifted (with the
      // run's tracks of other parts that reach its pads), and it is routed again where it
      // lands, with those parts, its pours refilled. Copper that was there before the run
      // still keeps it put. A refusal or a failed refill leaves the board as it was.
      const { spot, routing } = await editor.attempt(async () => {
        const { spot, vacated, rerouted } = toolCall(() => editor.place(ref, move));
        return {
          spot,
          routing: reportLayout(ctx.layoutPending, await editor.connect([ref, ...rerouted], { vacated }), [
            ref,
            ...rerouted,
          ]),
        };
      });
      saveBoard(ctx);
      return {
        ref,
        x: spot.x,
        y: spot.y,
        rotation: spot.rotation,
        side: spot.side,
        ...(move.near
          ? {
              near: move.near,
              distance: Math.round(spot.distance * 100) / 100,
              ratsnest: Math.round(spot.ratsnest * 100) / 100,
            }
          : {}),
        ...(spot.far ? { far: spot.far } : {}),
        routing,
      };
    },
  }),
  defineTool({
    name: "record_decision",
    effect: "edit",
    prose: ["decision", "why"],
    description: "Record a design decision (what and why); it is appended to DECISIONS.md when the run commits.",
    schema: v.strictObject({ decision: name(300), why: name(1000) }),
    run(ctx: RunContext, entry) {
      ctx.decisions.push(entry);
      return { recorded: ctx.decisions.length };
    },
  }),
  docEditTool,
  defineTool({
    name: "finish",
    effect: "finish",
    prose: ["summary"],
    description:
      "Declare the change complete. copperhead then runs the full check; new findings come back as a repair cycle.",
    schema: v.strictObject({ summary: name(4000) }),
    run(ctx: RunContext, { summary }) {
      ctx.finished = summary;
      return { verifying: true };
    },
  }),
];
