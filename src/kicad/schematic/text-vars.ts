/**
 * Text as eeschema draws it: `${NAME}` in a field or a text is replaced by what it names before
 * it is drawn, so its size on the sheet is the size of the expansion, not of the name. A symbol's
 * field resolves its symbol's fields (`${REFERENCE}`, `${VALUE}`, `${SIM.PARAMS}`: any field, by
 * its name in capitals); every text resolves its sheet's title block (`${TITLE}`, `${REVISION}`,
 * `${COMPANY}`, `${ISSUE_DATE}`, `${COMMENT1}` to `${COMMENT9}`) and file name, and the
 * project's text variables (the `.kicad_pro`'s `text_variables`). A name nothing resolves is drawn
 * as written, as eeschema draws it.
 */
import { basename } from "node:path";
import { child, children, text, type SList } from "../sexpr/index.ts";
import type { SchematicFile } from "./model/schematic-file.ts";
import type { PlacedSymbol } from "./model/symbols.ts";

/** What a `${NAME}` stands for, or undefined when this resolver does not know it. */
export type Resolver = (name: string) => string | undefined;

/** How deep a variable whose value holds variables is expanded (eeschema stops at a few levels). */
const MAX_DEPTH = 4;

/** `value` with every `${NAME}` that `resolve` knows replaced, variables in variables too. */
export function expandText(value: string, resolve: Resolver): string {
  let out = value;
  for (let depth = 0; depth < MAX_DEPTH && out.includes("${"); depth++) {
    const next = out.replace(/\$\{([^${}]+)\}/g, (whole, name: string) => resolve(name) ?? whole);
    if (next === out) break;
    out = next;
  }
  return out;
}

/**
 * What a field of `symbol` resolves, as eeschema does: its symbol's fields by name in capitals
 * (`${REFERENCE}`), then its sheet's variables (`sheetResolver`).
 */
export function symbolResolver(symbol: PlacedSymbol, sheet?: Resolver): Resolver {
  return byName(
    symbol.fields.map((f) => [f.name, f.value]),
    sheet,
  );
}

/** `(property …)` nodes not yet on a placed symbol: they resolve one another, then `sheet`'s variables, as its fields would. */
export function fieldsResolver(props: SList[], sheet?: Resolver): Resolver {
  return byName(
    props.map((p) => [text(p, 1) ?? "", text(p, 2) ?? ""]),
    sheet,
  );
}

/** Fields by name in capitals, as eeschema matches `${NAME}`, then what `rest` knows. */
function byName(fields: [string, string][], rest?: Resolver): Resolver {
  const named = new Map(fields.map(([name, value]) => [name.toUpperCase(), value]));
  return (name) => named.get(name.toUpperCase()) ?? rest?.(name);
}

/** A sheet's title block, its file name and the project's text variables. */
export function sheetResolver(file: SchematicFile): Resolver {
  const block = child(file.doc.root, "title_block");
  const titleBlock = new Map<string, string>();
  if (block) {
    for (const [key, name] of [
      ["title", "TITLE"],
      ["rev", "REVISION"],
      ["company", "COMPANY"],
      ["date", "ISSUE_DATE"],
    ] as const) {
      const value = text(child(block, key) ?? block, 1);
      if (child(block, key) && value !== undefined) titleBlock.set(name, value);
    }
    for (const comment of children(block, "comment"))
      titleBlock.set(`COMMENT${text(comment, 1)}`, text(comment, 2) ?? "");
  }
  const project = file.textVariables;
  const own: Resolver = (name) =>
    name === "FILENAME" ? basename(file.path) : (titleBlock.get(name) ?? project.get(name));
  // A title block's own fields may use the project's variables (`(title "${title}")`).
  return (name) => {
    const found = own(name);
    return found === undefined ? undefined : expandText(found, (inner) => (inner === name ? undefined : own(inner)));
  };
}
