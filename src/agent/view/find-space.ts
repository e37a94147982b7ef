/**
 * The `find_space` question, "where is a free area of W × H near X?", answered with the same
 * free-space searches placement uses: on a sheet, `SheetSpace` (everything drawn, fields
 * included, the page frame and title block, the sheet's grid); on the board, the clearance
 * model's obstacles on the board's grid. On the board it can be asked for a footprint instead
 * of an area: the spot is then found by placement's own search and check (spot-search.ts), in
 * the rotation and on the side asked, so `place_footprint` at its x, y accepts it.
 */
import type { Design } from "../../design/design.ts";
import { boardBounds } from "../../kicad/board/footprint/instance.ts";
import { REACH, spotNear } from "../../kicad/board/placement.ts";
import { describeBlockers, searchArea, type SearchResult } from "../../kicad/board/spot-search.ts";
import { footprintItems } from "../../kicad/board/clearance/items.ts";
import type { PointMm } from "../../kicad/board/model.ts";
import { BoardObstacles } from "../../kicad/board/clearance/obstacles.ts";
import { BoardRules } from "../../kicad/board/clearance/rules.ts";
import { IU_PER_MM, toIU } from "../../kicad/schematic/geometry.ts";
import { SheetSpace } from "../../kicad/schematic/edit/placement.ts";
import type { SchematicEditor } from "../../kicad/schematic/edit/editor.ts";
import { toolCall, ToolError } from "../tools/tool.ts";
import { sheetRegion } from "./sheet-view.ts";

export interface SpaceQuestion {
  document: "schematic" | "board";
  /** On a sheet: room for this symbol (or one like this part), with its fields and wiring, rather than for a bare rectangle. */
  libId?: string;
  like?: string;
  /** The area asked for, mm (needed unless a symbol, or on the board a footprint, is asked about). */
  width?: number;
  height?: number;
  /** A footprint on the board to find a spot for, at `rotation` (default its own). */
  footprint?: string;
  /** The symbol's or footprint's rotation, degrees. */
  rotation?: number;
  /** A pad of `near` the spot is to be next to; its distance is measured to it. */
  pin?: string;
  near?: string;
  x?: number;
  y?: number;
  sheet?: string;
  side?: "front" | "back";
}

const round = (v: number) => Math.round(v * 100) / 100;

export function findSpace(design: Design, q: SpaceQuestion, editor: () => SchematicEditor) {
  if (q.document === "board") return boardSpace(design, q);
  if (q.libId !== undefined || q.like !== undefined) return symbolSpace(editor(), q);
  const { width, height } = q;
  if (width === undefined || height === undefined)
    throw new ToolError(
      "find_space needs width and height (mm), or on a sheet lib_id (or like) for the symbol to make room for",
    );
  return sheetSpace(design, { ...q, width, height });
}

/**
 * Where `add_component` would put a symbol, asked of `add_component` itself (a preview that
 * changes nothing), so the spot returned is one it accepts as `at`: the symbol's drawing, its
 * fields and the room its wiring needs, not just a rectangle of the size the model guessed.
 */
function symbolSpace(editor: SchematicEditor, q: SpaceQuestion) {
  if (q.x !== undefined || q.y !== undefined)
    throw new ToolError(
      "find_space for a symbol (lib_id or like) searches next to near (a part or net) or on sheet; x and y are for a bare area",
    );
  const added = toolCall(() =>
    editor.preview((e) =>
      e.addComponent({ libId: q.libId, like: q.like, near: q.near, sheet: q.sheet, rotation: q.rotation }),
    ),
  );
  return {
    document: "schematic",
    sheet: added.sheet,
    symbol: q.libId ?? `like ${q.like}`,
    x: added.at[0],
    y: added.at[1],
    rotation: added.rotation,
    ...(added.near ? { near: added.near, distance: added.distance } : {}),
    note: "x, y is where the symbol's origin goes: pass it to add_component as at, with this rotation; its drawing, fields and wiring fit there",
  };
}

function sheetSpace(design: Design, q: SpaceQuestion & { width: number; height: number }) {
  const region = sheetRegion(design, { ref: q.near, x: q.x, y: q.y, sheet: q.sheet, width: 0, height: 0 });
  const space = new SheetSpace(region.instance.file);
  const anchor = q.near || q.x !== undefined ? region.box : space.page.area;
  const body = { x0: 0, y0: 0, x1: toIU(q.width), y1: toIU(q.height) };
  const spot = space.findSpot([{ rotation: 0, penalty: 0, body, boxes: [body] }], anchor);
  if (!spot)
    throw new ToolError(
      `no free area of ${q.width} × ${q.height} mm on sheet ${region.instance.humanPath}; the page is full there (view the sheet to see it, or ask for less)`,
    );
  const mm = (iu: number) => round(iu / IU_PER_MM);
  return {
    document: "schematic",
    sheet: region.instance.humanPath,
    x: mm(spot.at.x),
    y: mm(spot.at.y),
    width: q.width,
    height: q.height,
    centre: { x: mm(spot.at.x + body.x1 / 2), y: mm(spot.at.y + body.y1 / 2) },
    distance: mm(spot.distance),
    ...(spot.block ? { inBlock: spot.block.inside } : {}),
    note: `x, y is the free area's top-left corner in sheet mm; it keeps 1.27 mm clear of everything drawn${spot.block ? (spot.block.inside ? ", inside the block drawn around the anchor" : "; no area of this size is free inside the block drawn around the anchor, so this one is outside it") : ""}`,
  };
}

function boardSpace(design: Design, q: SpaceQuestion) {
  const board = design.board;
  if (!board) throw new ToolError("the project has no board (.kicad_pcb)");
  let anchor;
  // Where the distance is measured from: the pin asked for, else the part's origin or the point.
  let from: PointMm;
  const obstacles = new BoardObstacles(board, BoardRules.load(design.project.projectFile, design.project.repoRoot));
  if (q.near) {
    const fp = board.footprint(q.near);
    if (!fp) throw new ToolError(`no footprint ${q.near} on the board`);
    anchor = boardBounds(fp.node) ?? { minX: fp.at.x, minY: fp.at.y, maxX: fp.at.x, maxY: fp.at.y };
    from = fp.at;
    if (q.pin !== undefined) {
      const pad = footprintItems(fp.node, obstacles.copper).find((i) => i.kind === "pad" && i.pad === q.pin);
      if (!pad) throw new ToolError(`${q.near} has no pad ${q.pin}`);
      from = pad.ends![0]!;
      anchor = { minX: from.x, minY: from.y, maxX: from.x, maxY: from.y };
    }
  } else if (q.x !== undefined && q.y !== undefined) {
    from = { x: q.x, y: q.y };
    anchor = { minX: q.x, minY: q.y, maxX: q.x, maxY: q.y };
  } else throw new ToolError("find_space on the board needs near (a reference) or x and y");
  const side = q.side ?? "front";
  const around = `on the ${side} within ${REACH} mm of ${q.near ? `${q.near}${q.pin !== undefined ? ` pad ${q.pin}` : ""}` : `${q.x}, ${q.y}`}`;
  const distanceOf = (spot: NonNullable<SearchResult["spot"]>) => round(Math.hypot(spot.x - from.x, spot.y - from.y));
  if (q.footprint !== undefined) {
    const fp = board.footprint(q.footprint);
    if (!fp) throw new ToolError(`no footprint ${q.footprint} on the board`);
    const rotation = q.rotation ?? fp.at.rotation;
    const { spot, blockers } = spotNear(board, fp.ref, anchor, side, rotation, obstacles.rules, obstacles);
    if (!spot)
      throw new ToolError(`no spot for ${fp.ref} at rotation ${rotation} ${around}: ${describeBlockers(blockers)}`);
    return {
      document: "board",
      footprint: fp.ref,
      side,
      rotation: spot.rotation,
      x: spot.x,
      y: spot.y,
      distance: distanceOf(spot),
      note: `place_footprint ${fp.ref} at this x, y, rotation and side fits it clear of the board's rules; distance is from its origin to ${q.pin !== undefined ? `pad ${q.pin} of ${q.near}` : q.near ? `${q.near}'s origin` : "the point"}, mm`,
    };
  }
  if (q.width === undefined || q.height === undefined)
    throw new ToolError("find_space on the board needs width and height (mm), or footprint (a reference on the board)");
  const { spot, blockers } = searchArea(board, obstacles, q.width, q.height, anchor, side, REACH);
  if (!spot)
    throw new ToolError(`no free area of ${q.width} × ${q.height} mm ${around}: ${describeBlockers(blockers)}`);
  const [w, h] = spot.rotation % 180 === 0 ? [q.width, q.height] : [q.height, q.width];
  return {
    document: "board",
    side,
    centre: { x: spot.x, y: spot.y },
    x: round(spot.x - w / 2),
    y: round(spot.y - h / 2),
    width: w,
    height: h,
    distance: distanceOf(spot),
    note: `centre is where place_footprint's x, y would put a footprint of this courtyard; the area is clear of courtyards, not of copper: tracks may run under it; distance is from the centre to ${q.pin !== undefined ? `pad ${q.pin} of ${q.near}` : q.near ? `${q.near}'s origin` : "the point"}, mm. To be sure a part fits, ask with footprint (its reference) instead of width and height`,
  };
}
