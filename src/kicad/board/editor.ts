/**
 * `BoardEditor`: the board's counterpart of `SchematicEditor` (`kicad/schematic/edit/editor.ts`),
 * and the one way a run changes the board. It owns the parsed board, its placement index and
 * the copper the run laid itself, and hands each operation to the module that does it
 * (`placement.ts`, `route/connect-added.ts`, `sync/apply.ts`).
 *
 * Like the schematic editor it works in two steps: `attempt` runs one or more operations as a
 * single edit, and when any of them throws, the board goes back to what it was before (its
 * bytes parsed again, the run's copper as it was); `save` writes the board once, through the
 * caller's writer (a run's journal). What is saved is from then on what an attempt returns to.
 */
import { printSexprBytes, readDesignBytes } from "../sexpr/index.ts";
import { BoardObstacles } from "./clearance/obstacles.ts";
import { BoardRules } from "./clearance/rules.ts";
import { copperLayers, footprintItems, laidItems } from "./clearance/items.ts";
import { placeFootprint, type BoardSpot, type FootprintMove } from "./placement.ts";
import { connectAdded, type AddedConnections, type ConnectOptions } from "./route/connect-added.ts";
import { orphanedCopper } from "./route/orphaned.ts";
import { copperWithIds, liftCopper } from "./route/write.ts";
import { boxesOverlap } from "./clearance/geometry.ts";
import type { NewCopper } from "./zones/zones.ts";
import { prepareRefill } from "./zones/refill.ts";
import { Board, type Footprint } from "./model.ts";

export interface BoardEditorOptions {
  /** The repo root: the board must resolve inside it. */
  within: string;
  /** The project file beside the board, whose rules (and custom rules) the board keeps. */
  projectFile: string;
}

export class BoardEditor {
  private current: Board;
  /** The board's bytes as last loaded or saved: what a failed attempt returns to. */
  private saved: Uint8Array;
  /** Whether the tree has changed since it was loaded or saved. */
  private dirty = false;
  private index?: BoardObstacles;
  private loadedRules?: BoardRules;
  /** Ids of the tracks and vias the run laid for each part it routed: what moving it may lift. */
  private routed = new Map<string, Set<string>>();
  /**
   * The footprints on the board when the run opened it, by symbol path (a rename keeps it) or,
   * for a board-only part, reference. Copper on the pads of a part added since is not its
   * routing: the part was put down on it (a ground pad on a stitching via).
   */
  private readonly present: ReadonlySet<string>;

  private constructor(
    readonly file: string,
    private readonly options: BoardEditorOptions,
  ) {
    this.saved = readDesignBytes(file, { within: options.within });
    this.current = Board.parse(this.saved, file);
    this.present = new Set(this.current.footprints().map(identity));
  }

  /** Opens the board `file`, read through the confined reader (inside `options.within`). */
  static open(file: string, options: BoardEditorOptions): BoardEditor {
    return new BoardEditor(file, options);
  }

  /** The board being edited: every operation so far shows in it. */
  get board(): Board {
    return this.current;
  }

  /** The board's design rules (net classes, custom rules), read once. */
  get rules(): BoardRules {
    return (this.loadedRules ??= BoardRules.load(this.options.projectFile, this.options.within));
  }

  /** The board's placement index, built once per state of the board. */
  obstacles(): BoardObstacles {
    return (this.index ??= new BoardObstacles(this.current, this.rules));
  }

  /** The tracks and vias the run laid for `ref`, by id. */
  ownCopper(ref: string): ReadonlySet<string> | undefined {
    return this.routed.get(ref);
  }

  // --- Operations --------------------------------------------------------------------------

  /**
   * Says a refill will follow (parts about to be placed, moved or removed): KiCad's Python starts
   * now, while they are placed and routed (`prepareRefill`).
   */
  expectRefill(): void {
    prepareRefill(this.current);
  }

  /**
   * Moves `ref` (see `placeFootprint`): the tracks and vias the run laid for it are lifted first,
   * and so are those it laid for other parts that reach `ref`'s pads (a capacitor routed to a
   * new regulator's pin): that copper is the run's, not copper that was there before, and
   * would be left behind. `ref` and those parts are routed again once it lands (`connect` with
   * `vacated`, `rerouted`). Returns the spot and where its pads and lifted copper were, for the
   * refill.
   */
  place(ref: string, move: FootprintMove): { spot: BoardSpot; vacated: NewCopper[]; rerouted: string[] } {
    this.expectRefill();
    const rerouted = this.joinedTo(ref);
    const vacated = [...this.vacate(ref), ...rerouted.flatMap((other) => this.lift(other))];
    const fp = this.current.footprint(ref);
    const routedBefore = fp !== undefined && this.present.has(identity(fp));
    const spot = placeFootprint(
      this.current,
      ref,
      move,
      this.rules,
      this.obstacles(),
      routedBefore,
      rerouted.length === 0,
    );
    this.dirty = true;
    return { spot, vacated, rerouted };
  }

  /**
   * Clears the way for taking the footprints `refs` off the board (a sync removing them): the
   * tracks and vias the run laid for them are lifted, and so is the copper laid before the run
   * that served only their pads (`orphanedCopper`: a stub left on a removed pad is a dangling
   * track). Returns where their pads and that copper were, for the refill (`connect` with
   * `vacated`), so their voids and spokes leave the pours; and how many tracks and vias from
   * before the run went with them.
   */
  vacateForRemoval(refs: string[]): { vacated: NewCopper[]; tookAlong: { tracks: number; vias: number } } {
    if (refs.length > 0) this.expectRefill();
    const vacated = refs.flatMap((ref) => this.vacate(ref));
    for (const ref of refs) this.routed.delete(ref);
    const orphaned = orphanedCopper(this.current, refs);
    const lifted = orphaned.size > 0 ? liftCopper(this.current, orphaned) : [];
    if (lifted.length > 0) {
      this.dirty = true;
      this.index?.removeCopper(orphaned);
    }
    const vias = lifted.filter((c) => c.layers === "all").length;
    return { vacated: [...vacated, ...lifted], tookAlong: { tracks: lifted.length - vias, vias } };
  }

  /**
   * Routes the footprints `refs` to their nets' copper and refills the zones their copper
   * touches, and those where copper was taken away (`vacated`: see `connectAdded`); the copper
   * laid is remembered as the run's own.
   */
  async connect(refs: string[], options: ConnectOptions = {}): Promise<AddedConnections> {
    if (refs.length === 0 && !options.vacated?.length)
      return { outcomes: [], left: new Map(), refilled: [], narrow: [] };
    this.expectRefill();
    this.dirty = true;
    // An index kept current by the operations since the last change (a `place`) serves the
    // routing as it is; so does the one a sync placed its parts with (`indexForRouting`). With
    // the copper laid, it is the board's index again, for the next move.
    const index = options.obstacles ?? this.obstacles();
    const layout = await connectAdded(this.current, this.file, this.rules, refs, { ...options, obstacles: index });
    for (const o of layout.outcomes) {
      const own = this.routed.get(o.ref) ?? new Set<string>();
      for (const id of o.ids) own.add(id);
      this.routed.set(o.ref, own);
    }
    index.addCopper(laidItems(this.current, index.copper, new Set(layout.outcomes.flatMap((o) => o.ids))));
    this.index = index;
    return layout;
  }

  /**
   * Any other change to the tree (a sync plan applied, a footprint flag set): `change` edits
   * `board` in place; the placement index is built again on next use.
   */
  change<T>(change: (board: Board) => T): T {
    this.dirty = true;
    this.index = undefined;
    return change(this.current);
  }

  // --- The edit ----------------------------------------------------------------------------

  /**
   * Runs `fn` as one edit: when it throws, the board is the saved one again (its bytes parsed
   * anew, so no half-made change survives in the tree) and the run's copper is as it was.
   */
  async attempt<T>(fn: (board: Board) => Promise<T> | T): Promise<T> {
    const before = this.dirty ? printSexprBytes(this.current.doc) : this.saved;
    const routed = new Map([...this.routed].map(([ref, ids]) => [ref, new Set(ids)]));
    const wasDirty = this.dirty;
    try {
      return await fn(this.current);
    } catch (err) {
      this.current = Board.parse(before, this.file);
      this.routed = routed;
      this.index = undefined;
      this.dirty = wasDirty;
      throw err;
    }
  }

  /**
   * Writes the board through `write` when it changed since it was loaded or saved; true when it
   * wrote. A write that fails leaves the editor at the saved board, which is what the file holds.
   */
  save(write: (file: string, bytes: Uint8Array) => void): boolean {
    if (!this.dirty) return false;
    const bytes = printSexprBytes(this.current.doc);
    try {
      write(this.file, bytes);
    } catch (err) {
      this.current = Board.parse(this.saved, this.file);
      this.index = undefined;
      this.dirty = false;
      throw err;
    }
    this.saved = bytes;
    this.dirty = false;
    return true;
  }

  /**
   * Clears the way for moving `ref`: lifts the tracks and vias the run laid for it and returns
   * where they and its pads were.
   */
  private vacate(ref: string): NewCopper[] {
    const fp = this.current.footprint(ref);
    if (!fp) return [];
    // Each pad on its own layers: a pad on the front moves no inner plane's fill, and refilling
    // one is most of a move's time on a four-layer board (glasgow's planes: 0.9 s).
    const pads = this.padsOf(ref).map((p): NewCopper => ({ box: p.box, net: "", layers: new Set(p.layers) }));
    return [...pads, ...this.lift(ref)];
  }

  /** Lifts the tracks and vias the run laid for `ref`; returns where they were. */
  private lift(ref: string): NewCopper[] {
    const ids = this.routed.get(ref);
    if (!ids?.size) return [];
    this.dirty = true;
    const lifted = liftCopper(this.current, ids);
    this.index?.removeCopper(ids);
    ids.clear();
    return lifted;
  }

  private padsOf(ref: string) {
    const fp = this.current.footprint(ref);
    return fp ? footprintItems(fp.node, copperLayers(this.current)).filter((i) => i.kind === "pad") : [];
  }

  /** The other parts the run routed with copper that reaches a pad of `ref`. */
  private joinedTo(ref: string): string[] {
    const pads = this.padsOf(ref);
    return [...this.routed]
      .filter(
        ([other, ids]) =>
          other !== ref &&
          ids.size > 0 &&
          copperWithIds(this.current, ids).some(({ box }) => pads.some((p) => boxesOverlap(box, p.box))),
      )
      .map(([other]) => other);
  }
}

/** What a footprint is across the run's edits: its symbol path, or a board-only part's reference. */
function identity(fp: Footprint): string {
  return fp.path ?? `ref:${fp.ref}`;
}
