/**
 * The state every schematic edit operation shares: the project being edited (its views show
 * every edit made so far, see `SchematicFile`), the libraries new symbols come from, the
 * transactions that record what each edit touched, and the netlist of the trees as they are.
 */
import { resolve } from "node:path";
import { CopperheadError } from "../../../errors.ts";
import { suggestion } from "../../../util/close-matches.ts";
import type { Libraries } from "../../library/libraries.ts";
import { buildNetlist, type DesignNetlist } from "../../netlist/netlist.ts";
import { instancesInRoot } from "../dialect.ts";
import type { SchematicProject, SheetInstance } from "../model/hierarchy.ts";
import type { SchematicFile } from "../model/schematic-file.ts";
import type { PlacedSymbol } from "../model/symbols.ts";
import { SheetWiring } from "../wiring.ts";
import { SchematicTransactions } from "./transaction.ts";

export class EditorState {
  readonly transactions: SchematicTransactions;
  private built?: { revision: number; netlist: DesignNetlist };

  constructor(
    readonly project: SchematicProject,
    readonly libraries: Libraries,
  ) {
    this.transactions = new SchematicTransactions(project);
  }

  /** Runs an edit of `files` (see `SchematicTransactions.run`). */
  edit(files: Iterable<SchematicFile>, change: () => void, then?: () => void): void {
    this.transactions.run(files, change, then);
  }

  /** The netlist of the edited trees, as kicad-cli would export it (built once per state of the trees). */
  netlist(): DesignNetlist {
    const revision = this.project.revision;
    if (this.built?.revision !== revision) this.built = { revision, netlist: buildNetlist(this.project) };
    return this.built.netlist;
  }

  /** True when the project keeps symbol references in the root's `symbol_instances` (KiCad 6). */
  get legacyInstances(): boolean {
    return instancesInRoot(this.project.root.file.version);
  }

  /** A sheet and, in a KiCad 6 project, the root (placing a symbol there writes its instance rows). */
  withInstanceRows(file: SchematicFile): SchematicFile[] {
    return this.legacyInstances ? [file, this.project.root.file] : [file];
  }

  /** The sheet file a placed symbol is in. */
  fileOf(symbol: PlacedSymbol): SchematicFile {
    return [...this.project.files.values()].find((f) => f.symbols.includes(symbol))!;
  }

  /** A sheet of the project by path, or a typed error naming the sheets. */
  file(path: string): SchematicFile {
    const file = this.project.files.get(resolve(path));
    if (!file) {
      throw new CopperheadError("not_found", `${path} is not a sheet of this project.`, {
        fix: suggestion("sheets", path, [...this.project.files.keys()]),
        file: path,
      });
    }
    return file;
  }

  /** Every instance of a sheet file (one per sheet symbol that uses it). */
  instancesOf(file: SchematicFile): SheetInstance[] {
    return this.project.instancesOf(file);
  }

  /** The wiring of one sheet instance, as it is now. */
  wiring(instance: SheetInstance): SheetWiring {
    return new SheetWiring(instance.file, instance.path, this.project.projectName);
  }
}
