/**
 * Reads the netlist kicad-cli exports with `--format kicadsexpr` into the same shape the
 * native netlister produces, so the two can be compared net by net.
 */
import { child, children, childText, isList, parseSexpr } from "../sexpr/index.ts";
import { naturalCompare } from "../../util/natural-compare.ts";
import type { Net, Netlist, NetNode } from "./netlist.ts";
import { CopperheadError } from "../../errors.ts";

export function parseKicadNetlist(source: string, file?: string): Netlist {
  const doc = parseSexpr(source, { file });
  if (!isList(doc.root, "export")) {
    throw new CopperheadError("parse_error", `${file ?? "<netlist>"}: not a KiCad netlist (root is not export)`, {
      file,
      fix: "Export the netlist with `kicad-cli sch export netlist --format kicadsexpr`.",
    });
  }
  const nets: Net[] = [];
  for (const net of children(child(doc.root, "nets") ?? doc.root, "net")) {
    const nodes: NetNode[] = children(net, "node").map((node) => {
      const out: NetNode = { ref: childText(node, "ref") ?? "", pin: childText(node, "pin") ?? "" };
      const pinfunction = childText(node, "pinfunction");
      const pintype = childText(node, "pintype");
      if (pinfunction !== undefined) out.pinfunction = pinfunction;
      if (pintype !== undefined) out.pintype = pintype;
      return out;
    });
    nodes.sort((a, b) => naturalCompare(a.ref, b.ref) || naturalCompare(a.pin, b.pin));
    nets.push({ name: childText(net, "name") ?? "", nodes });
  }
  nets.sort((a, b) => naturalCompare(a.name, b.name));
  return { nets };
}
