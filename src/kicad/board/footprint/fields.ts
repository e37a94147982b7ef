/**
 * Writing a placed footprint's fields and sheet data the way the board's own format writes them
 * (see `BoardDialect`): KiCad 8 and newer keep every field as a positioned `(property …)` and the
 * sheet as `(sheetname …)`/`(sheetfile …)`; KiCad 6 and 7 keep Reference and Value as
 * `(fp_text reference …)`/`(fp_text value …)`, every other field and the sheet as bare
 * `(property "name" "value")` pairs, which they write sorted by name.
 */
import { textStringIndex, type Footprint } from "../model.ts";
import { fieldForFootprint } from "./instance.ts";
import { uuidSource } from "../../uuids.ts";
import type { BoardDialect } from "../../format-versions.ts";
import { afterLast, FOOTPRINT_HEADER } from "../../sexpr/node-order.ts";
import { insertInDialect } from "./dialect.ts";
import { child, children, list, q, removeChild, setAtom, text, type SList } from "../../sexpr/index.ts";

/** Sets a field's value, adding the field when the footprint has none of that name. */
export function setFootprintField(fp: Footprint, dialect: BoardDialect, name: string, value: string): void {
  const node = fp.node;
  if (dialect.textFields === "fp_text" && (name === "Reference" || name === "Value")) {
    const kind = name === "Reference" ? "reference" : "value";
    const existing = children(node, "fp_text").find((t) => text(t, 1) === kind);
    if (existing) {
      setAtom(existing, textStringIndex(existing), q(value));
      return;
    }
  }
  const existing = children(node, "property").find((p) => text(p, 1) === name);
  if (existing) {
    setAtom(existing, 2, q(value));
    return;
  }
  if (dialect.textFields === "fp_text") {
    insertBareProperty(node, name, value, dialect);
    return;
  }
  const uuid = uuidSource(`${footprintKey(fp)}|field|${name}`)();
  const field = fieldForFootprint(name, value, fp.layer.startsWith("B.") ? "back" : "front", fp.at.rotation, uuid);
  insertInDialect(node, field, afterLast(node, [...FOOTPRINT_HEADER, "property"]), dialect);
}

/** Sets `sheetname` or `sheetfile`; KiCad 8+ drops an empty sheet name, KiCad 6/7 keep it. */
export function setSheetData(
  fp: Footprint,
  dialect: BoardDialect,
  name: "sheetname" | "sheetfile",
  value: string,
): void {
  const node = fp.node;
  if (dialect.sheetData === "property") {
    const key = name === "sheetname" ? "Sheetname" : "Sheetfile";
    const existing = children(node, "property").find((p) => text(p, 1) === key);
    if (existing) setAtom(existing, 2, q(value));
    else insertBareProperty(node, key, value, dialect);
    return;
  }
  const existing = child(node, name);
  if (value === "" && name === "sheetname") {
    if (existing) removeChild(node, existing);
    return;
  }
  if (existing) {
    setAtom(existing, 1, q(value));
    return;
  }
  const before =
    name === "sheetname"
      ? [...FOOTPRINT_HEADER, "property", "path"]
      : [...FOOTPRINT_HEADER, "property", "path", "sheetname"];
  insertInDialect(node, list(name, q(value)), afterLast(node, before), dialect);
}

/** Sets the symbol `path` (written the same way by every release). */
export function setSymbolPath(fp: Footprint, dialect: BoardDialect, value: string): void {
  const existing = child(fp.node, "path");
  if (existing) setAtom(existing, 1, q(value));
  else insertInDialect(fp.node, list("path", q(value)), afterLast(fp.node, [...FOOTPRINT_HEADER, "property"]), dialect);
}

/** A KiCad 6/7 key/value property, among the others in name order (byte order, as std::map). */
function insertBareProperty(node: SList, name: string, value: string, dialect: BoardDialect): void {
  const bare = children(node, "property");
  const next = bare.find((p) => (text(p, 1) ?? "") > name);
  const at = next ? node.items.indexOf(next) : afterLast(node, [...FOOTPRINT_HEADER, "property"]);
  insertInDialect(node, list("property", q(name), q(value)), at, dialect);
}

function footprintKey(fp: Footprint): string {
  const id = child(fp.node, "uuid") ?? child(fp.node, "tstamp");
  return (id && text(id, 1)) || fp.ref;
}
