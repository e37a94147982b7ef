/**
 * `kicad/schematic/edit/` owns changing a schematic: the operations, where a new symbol goes,
 * how it is wired, and the transaction that tracks the sheets an edit touched. It sits on the
 * netlist (an edit re-derives nets to prove its claim); the board never imports it.
 *
 * Structured schematic edits (the edit stage of a gated run): the operations the `do` agent's edit tools
 * call. Every operation works on the lossless trees of a loaded project, never on raw text:
 *
 * - it validates everything it needs (refs, pins, sheets, lib ids, free room) before touching a
 *   tree, and throws a typed `CopperheadError` (with close matches in `fix`) otherwise;
 * - it inserts nodes laid out as KiCad 9 writes them, at the place eeschema would save them
 *   (grouped by item type, sorted by uuid), so diffs match what a KiCad save would show;
 * - where the outcome is a connectivity claim ("C3.1 is on +3V3", "the net is now /LED_DRIVE,
 *   same pins"), it re-derives the netlist natively and rolls the whole operation back when the
 *   claim does not hold, so a failed edit never leaves a half-changed tree.
 *
 * This module is the front door: `SchematicEditor` opens a project and hands each operation to
 * the module of its family (`add-remove.ts`, `add-sheet.ts`, `move.ts`, `connect.ts`, `rename.ts`,
 * `label-move.ts`, `fields.ts`), all working on one `EditorState` (`editor-state.ts`) over the shared transaction
 * (`transaction.ts`).
 *
 * Sheets used by several sheet symbols share one file, so an edit in such a sheet shows in every
 * instance: a new part gets one reference per instance (the one asked for in the instance
 * named, the next free ones in the others), a local label names the net in every instance, and
 * deleting a part deletes it (all its references) from every instance.
 */
import type { Libraries } from "../../library/libraries.ts";
import type { DesignNetlist } from "../../netlist/netlist.ts";
import { printSexpr, printSexprBytes } from "../../sexpr/index.ts";
import { loadSchematicProject, type SchematicProject } from "../model/hierarchy.ts";
import { addComponent, removeComponent, type AddComponentArgs, type AddedComponent } from "./add-remove.ts";
import { addSheet, type AddedSheet, type AddSheetArgs } from "./add-sheet.ts";
import { connect, disconnect, markNoConnect } from "./connect.ts";
import { setAttributes, setField, type PartAttributes } from "./fields.ts";
import { moveSymbol, type MovedSymbol, type MoveSymbolArgs } from "./move.ts";
import { moveLabel, type MovedLabel, type MoveLabelArgs } from "./label-move.ts";
import { renameNet, type RenamedNet } from "./rename.ts";
import { EditorState } from "./editor-state.ts";

export type {
  AddComponentArgs,
  AddedComponent,
  AddedSheet,
  AddSheetArgs,
  MovedLabel,
  MoveLabelArgs,
  MovedSymbol,
  MoveSymbolArgs,
  PartAttributes,
};

export class SchematicEditor {
  private readonly state: EditorState;

  private constructor(project: SchematicProject, libraries: Libraries) {
    this.state = new EditorState(project, libraries);
  }

  /**
   * Loads the project rooted at `rootSchematicPath`; `libraries` resolves new symbols. Sheets
   * must resolve inside `within` (the repo root; default the root schematic's folder).
   */
  static open(rootSchematicPath: string, libraries: Libraries, options: { within?: string } = {}): SchematicEditor {
    return new SchematicEditor(loadSchematicProject(rootSchematicPath, options), libraries);
  }

  /** The project being edited: its views show every edit made so far (see `SchematicFile`). */
  get project(): SchematicProject {
    return this.state.project;
  }

  // --- Operations (each documented in its module) ------------------------------------------

  /** Places a symbol from the libraries next to what it belongs with, wiring `connect` pins (see `add-remove.ts`). */
  addComponent(args: AddComponentArgs): AddedComponent {
    return addComponent(this.state, args);
  }

  /** Adds a hierarchical sheet in a new file, carrying nets from its parent (see `add-sheet.ts`). */
  addSheet(args: AddSheetArgs): AddedSheet {
    return addSheet(this.state, args);
  }

  /** Deletes every unit of `ref` with the wiring that served only its pins (see `add-remove.ts`). */
  removeComponent(ref: string): void {
    removeComponent(this.state, ref);
  }

  /** Moves a placed symbol next to a part or net, or to a point, with its wiring (see `move.ts`). */
  moveSymbol(ref: string, args: MoveSymbolArgs): MovedSymbol {
    return moveSymbol(this.state, ref, args);
  }

  /** Attaches a free pin to `net` in the sheet's style (see `connect.ts`). */
  connect(ref: string, pin: string, net: string): void {
    connect(this.state, ref, pin, net);
  }

  /** Cuts a pin loose from its wiring (see `connect.ts`). */
  disconnect(ref: string, pin: string): void {
    disconnect(this.state, ref, pin);
  }

  /** Puts a no-connect flag on a free pin (see `connect.ts`). */
  markNoConnect(ref: string, pin: string): void {
    markNoConnect(this.state, ref, pin);
  }

  /** Renames a net by renaming what names it, checked against the netlist (see `rename.ts`). */
  renameNet(name: string, to: string): RenamedNet {
    return renameNet(this.state, name, to);
  }

  /** Moves a label of `net` along its wiring, lengthening its wire's free end to reach (see `label-move.ts`). */
  moveLabel(net: string, args: MoveLabelArgs): MovedLabel {
    return moveLabel(this.state, net, args);
  }

  /** Sets a field on every unit of `ref`; setting `Reference` renames the part (see `fields.ts`). */
  setField(ref: string, field: string, value: string): void {
    setField(this.state, ref, field, value);
  }

  /** Sets a part's placement attributes on every unit (see `fields.ts`). */
  setAttributes(ref: string, attributes: PartAttributes): void {
    setAttributes(this.state, ref, attributes);
  }

  // --- Results ----------------------------------------------------------------------------

  /** Absolute paths of the sheets whose text differs from what was loaded (or last saved). */
  changedFiles(): string[] {
    return this.state.transactions.changed().map((f) => f.path);
  }

  /** The current text of a sheet of the project (a lossless string: for showing and comparing). */
  print(file: string): string {
    return printSexpr(this.state.file(file).doc);
  }

  /** The current bytes of a sheet of the project, as they are written. */
  bytes(file: string): Uint8Array {
    return printSexprBytes(this.state.file(file).doc);
  }

  /**
   * Writes the changed sheets back, to disk or through `write` (a run's journal); returns their
   * paths. What is written is from then on what the sheets are compared with.
   */
  save(write?: (path: string, bytes: Uint8Array) => void): string[] {
    return this.state.transactions.save(write);
  }

  /**
   * Runs `fn` (one or more operations, and any check of their outcome) as one edit: when it
   * throws, every sheet the operations changed goes back to what it was before.
   */
  attempt<T>(fn: () => T): T {
    let result: T | undefined;
    this.state.edit([], () => {
      result = fn();
    });
    return result as T;
  }

  /**
   * What `fn` would do, without doing it: its result, with every sheet it changed put back as
   * it was. Asks the operations themselves ("where would add_component put this?"), so a
   * preview and the edit that follows it cannot disagree.
   */
  preview<T>(fn: (editor: SchematicEditor) => T): T {
    const undo = new Error("preview");
    let result: T | undefined;
    try {
      this.state.edit([], () => {
        result = fn(this);
        throw undo;
      });
    } catch (err) {
      if (err !== undo) throw err;
    }
    return result as T;
  }

  /** The netlist of the edited trees, as kicad-cli would export it (built once per state of the trees). */
  netlist(): DesignNetlist {
    return this.state.netlist();
  }
}
