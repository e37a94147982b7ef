/**
 * The bookkeeping under a `SchematicEditor` (held by its `EditorState`): which sheets its
 * edits touched, what a failed edit puts back, and what is left to save.
 *
 * Edits change the sheets' trees in place (see `SchematicFile`), so nothing here re-reads a
 * file after a successful edit, and only the sheets an edit declared are ever printed: to
 * keep them for a rollback (and only once they were edited: a sheet still as parsed is its
 * bytes), to tell whether they changed, and to save them.
 */
import type { SchematicProject } from "../model/hierarchy.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import { printSexprBytes, sameBytes, writeSexprFile } from "../../sexpr/index.ts";

export class SchematicTransactions {
  /** Each sheet's bytes on disk: as loaded, or as last saved (none for a sheet an edit created and nobody saved yet). */
  private readonly original = new Map<SchematicFile, Uint8Array>();
  /** Sheets an edit touched since they were loaded or last saved. */
  private readonly touched = new Set<SchematicFile>();
  /** Sheets whose tree is still exactly the bytes it was parsed from. */
  private readonly asParsed = new Set<SchematicFile>();
  /** What the open outermost edit puts back on failure. */
  private rollback?: Map<SchematicFile, Uint8Array>;
  /** What takes each sheet the open outermost edit created out of the project again on failure. */
  private uncreate: (() => void)[] = [];

  constructor(private readonly project: SchematicProject) {
    for (const file of project.files.values()) {
      this.original.set(file, file.doc.bytes);
      this.asParsed.add(file);
    }
  }

  /**
   * Runs an edit of `files`: `change` changes their trees in place (planning with the views as
   * they were before it), then the files' views are read again from the changed trees, and
   * `then` follows up on the outcome (further edits, checks against the netlist). On any error
   * every file the edit, or an edit made inside it, touched goes back to what it was before.
   * Only the outermost edit keeps bytes for that: an edit inside it can only fail the whole.
   */
  run(files: Iterable<SchematicFile>, change: () => void, then?: () => void): void {
    const outermost = this.rollback === undefined;
    const saved = (this.rollback ??= new Map());
    const touched = new Set(files);
    for (const file of touched) {
      if (!saved.has(file)) saved.set(file, this.asParsed.has(file) ? file.doc.bytes : printSexprBytes(file.doc));
    }
    try {
      change();
      for (const file of touched) {
        file.changed();
        this.touched.add(file);
        this.asParsed.delete(file);
      }
      then?.();
    } catch (err) {
      if (outermost) {
        for (const [file, source] of saved) {
          file.restore(source);
          this.asParsed.add(file);
        }
        for (const undo of this.uncreate.reverse()) undo();
      }
      throw err;
    } finally {
      if (outermost) {
        this.rollback = undefined;
        this.uncreate = [];
      }
    }
  }

  /**
   * Records that the open edit made `file`, a sheet not on disk yet, part of the project:
   * `save` writes it whole, and when the edit fails `undo` takes it out of the project again,
   * so nothing of it is ever written.
   */
  created(file: SchematicFile, undo: () => void): void {
    if (this.rollback === undefined) throw new Error("a sheet is created only inside an edit");
    this.touched.add(file);
    this.uncreate.push(() => {
      undo();
      this.touched.delete(file);
    });
  }

  /** The sheets whose text differs from what is on disk, in project order; only touched sheets are printed to tell. */
  changed(): SchematicFile[] {
    return this.touchedFiles().filter((file) => !sameBytes(printSexprBytes(file.doc), this.original.get(file)));
  }

  /**
   * Writes the changed sheets with `write` (to disk by default; a run writes through its
   * journal), and from then on compares them with what was written; returns their paths.
   */
  save(write: (path: string, bytes: Uint8Array) => void = writeSexprFile): string[] {
    const written: string[] = [];
    for (const file of this.touchedFiles()) {
      const bytes = printSexprBytes(file.doc);
      if (!sameBytes(bytes, this.original.get(file))) {
        write(file.path, bytes);
        this.original.set(file, bytes);
        written.push(file.path);
      }
      this.touched.delete(file);
    }
    return written;
  }

  private touchedFiles(): SchematicFile[] {
    return [...this.project.files.values()].filter((file) => this.touched.has(file));
  }
}
