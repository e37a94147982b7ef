/**
 * The docs copperhead generates from the design (the BOM and the connector pinout), as one list
 * for everything that treats them alike: `init` writes them, a run regenerates them before every
 * verification, `edit_doc` refuses them (the model changes the design, not its tables), and the
 * prose scan of the drift check leaves them to their own table checks.
 */
import type { Component } from "../kicad/netlist/components.ts";
import type { Netlist } from "../kicad/netlist/netlist.ts";
import { BOM_FILE, parseBom, renderBom } from "./bom.ts";
import { parsePinout, PINOUT_FILE, renderPinout } from "./pinout.ts";

/** What a generated doc is rendered from: the design as `loadDesign` reads it. */
export interface GeneratedDocSource {
  project: { name: string };
  components: readonly Component[];
  netlist: Netlist;
}

export interface GeneratedDoc {
  /** File name inside the docs folder. */
  file: string;
  /** The whole doc for the design; with `existing`, everything that is the human's is kept. */
  render(design: GeneratedDocSource, existing?: string): string;
  /** Whether the generated region was edited by hand; undefined without markers. Throws `parse_error`. */
  parse(markdown: string, path: string): { edited: boolean } | undefined;
  /** What to tell a person whose hand edit regenerating would undo. */
  editedAdvice: string;
}

export const GENERATED_DOCS: readonly GeneratedDoc[] = [
  {
    file: BOM_FILE,
    render: renderBom,
    parse: parseBom,
    editedAdvice:
      "the generated Ref/Value/Footprint/MPN cells were edited by hand and regenerating would undo that; change the design instead (or move notes to a human column such as Notes), then rerun with --force",
  },
  {
    file: PINOUT_FILE,
    render: renderPinout,
    parse: parsePinout,
    editedAdvice:
      "the generated pin rows were edited by hand and regenerating would undo that; change the design instead (notes go outside the markers), then rerun with --force",
  },
];

/** True for a docs-folder-relative path that copperhead generates. */
export function isGeneratedDoc(pathInDocs: string): boolean {
  return GENERATED_DOCS.some((doc) => doc.file === pathInDocs);
}
