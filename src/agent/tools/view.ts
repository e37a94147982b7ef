/**
 * The model's eyes, read tools available in every phase: `view` shows a region of a sheet or
 * of the board as a picture with a legend of what is in it (providers without image input get
 * the legend alone), and `find_space` says where a free area of a given size is. Both answer in
 * the coordinates the edit tools take, so a model places parts where it has looked.
 */
import * as v from "valibot";
import { currentDesign, runEditor, type RunContext } from "../context.ts";
import { viewRegion } from "../view/render.ts";
import { findSpace } from "../view/find-space.ts";
import { defineTool, WithImages } from "./tool.ts";

const mm = (what: string) =>
  v.optional(v.pipe(v.number(), v.minValue(-10_000), v.maxValue(10_000), v.description(what)));
const span = (what: string) => v.optional(v.pipe(v.number(), v.minValue(1), v.maxValue(2_000), v.description(what)));
const ref = (what: string) => v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(100), v.description(what)));

export const viewTools = [
  defineTool({
    name: "view",
    effect: "read",
    description:
      "See a region of a schematic sheet or of the board: a PNG rendered by KiCad and a legend of what is there (parts with their positions, nets, labels, free rectangles; on the board footprints, courtyards, the zones with their net, layers, priority and whether filled, and unrouted connections drawn as blue ratsnest lines; pours are drawn translucent in their layer's colour under the tracks, the side of the part asked about on top). Centre it on a ref, a net (schematic) or x, y (with sheet); with none, the whole sheet or board. Coordinates are mm as the edit tools take them.",
    schema: v.strictObject({
      document: v.optional(v.picklist(["schematic", "board"]), "schematic"),
      ref: ref("A reference to centre on, e.g. U3"),
      net: ref("A net to show where it is drawn (schematic only)"),
      x: mm("Centre x in mm (with y)"),
      y: mm("Centre y in mm (with x)"),
      sheet: ref("Sheet path (/, /Power/) or file name; default the ref's or net's sheet, else the root"),
      width: span("Smallest width shown, mm (default 50 on a sheet, 30 on the board)"),
      height: span("Smallest height shown, mm"),
      layers: v.optional(
        v.pipe(
          v.array(v.pipe(v.string(), v.maxLength(40))),
          v.minLength(1),
          v.maxLength(20),
          v.description("Board layers to plot (default F.Cu, B.Cu, F.SilkS, F.CrtYd, B.CrtYd, Edge.Cuts)"),
        ),
      ),
    }),
    async run(ctx: RunContext, args) {
      const { document, layers, net, sheet, ...rest } = args;
      const question =
        document === "board" ? { document, ...rest, ...(layers ? { layers } : {}) } : { document, ...rest, net, sheet };
      const view = await viewRegion(ctx.project, () => currentDesign(ctx), question);
      return new WithImages(view.legend, [{ mediaType: "image/png", data: view.png }]);
    },
  }),
  defineTool({
    name: "find_space",
    effect: "read",
    description:
      "Where is a free area of width × height mm near a part (near, or one of its pads: pin) or a point (x, y), on a sheet (clear of every symbol, field, wire, label and the title block, on the sheet's grid) or on the board (inside the outline, clear of courtyards; tracks may run under it)? On the board, ask with footprint (a reference on the board) instead of width and height for a spot that footprint fits at rotation on side, checked exactly as place_footprint checks it (pads clear of other nets' copper, holes, rule areas, the edge; silkscreen on the board and off pads). Returns its position in the coordinates move_symbol / add_component / place_footprint take, and its distance (board: centre to the pin, the part's origin or the point). For a part to add to a sheet, give lib_id (or like) with near or sheet instead of width and height guesses: the answer is the origin add_component accepts as at, with room for the symbol's fields and wiring.",
    schema: v.strictObject({
      document: v.optional(v.picklist(["schematic", "board"]), "schematic"),
      width: v.optional(v.pipe(v.number(), v.minValue(0.5), v.maxValue(1_000))),
      height: v.optional(v.pipe(v.number(), v.minValue(0.5), v.maxValue(1_000))),
      footprint: ref("Board: a footprint to find a spot for, instead of width and height"),
      pin: ref("Board: a pad number of near to be next to"),
      near: ref("A reference to search around"),
      x: mm("Point to search around, mm (with y)"),
      y: mm("Point to search around, mm (with x)"),
      sheet: ref("Sheet path or file name for x, y (schematic); default the root"),
      side: v.optional(v.picklist(["front", "back"])),
      lib_id: v.optional(
        v.pipe(
          v.string(),
          v.regex(/^[^:]+:.+$/, "use Library:Symbol, e.g. Device:C"),
          v.description(
            "On a sheet: room for this symbol with its fields and wiring, as add_component places it; x, y is then its origin, to pass to add_component as at",
          ),
        ),
      ),
      like: v.optional(
        v.pipe(
          v.string(),
          v.minLength(1),
          v.maxLength(100),
          v.description("On a sheet: room for a part like this one (as add_component like)"),
        ),
      ),
      rotation: v.optional(
        v.pipe(
          v.picklist([0, 90, 180, 270]),
          v.description("Degrees: the symbol's (lib_id, like) or the footprint's (default its own)"),
        ),
      ),
    }),
    run(ctx: RunContext, { lib_id, ...args }) {
      return findSpace(currentDesign(ctx), { ...args, libId: lib_id }, () => runEditor(ctx));
    },
  }),
];
