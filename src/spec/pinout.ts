/**
 * `docs/PINOUT.md`: every connector's pins, with their names and the nets they are on —
 * what someone wiring a harness or writing firmware reads, generated from the schematic so it
 * can never be out of date unnoticed. A net rename shows up here as a changed row.
 *
 * Like the BOM, the generated part sits between marker comments (see generated-region.ts):
 * copperhead writes it at `init`, regenerates it when a run finishes, and `check` reports any
 * row that disagrees with the design as drift. Text outside the markers is the human's.
 *
 * A connector is a component whose reference prefix is J, P, CN or CON, or whose symbol comes
 * from a library named for connectors (`Connector`, `Connector_Generic`, a vendor's
 * `OLIMEX_Connectors`: real designs name connectors `VGA1` or `PWR_JACK1` as often as `J1`). Pins are listed in natural pin order; a pin KiCad leaves on a net
 * of its own (`unconnected-(…)`) shows as not connected.
 */
import type { Component } from "../kicad/netlist/components.ts";
import { naturalCompare } from "../util/natural-compare.ts";
import type { Netlist } from "../kicad/netlist/netlist.ts";
import {
  beginMarker,
  contentHash,
  endMarker,
  findGeneratedRegion,
  replaceGeneratedRegion,
} from "./generated-region.ts";
import { isRuleRow, splitTableRow, tableRow, tableRule } from "./markdown-table.ts";

export const PINOUT_FILE = "PINOUT.md";
const REGION = "pinout";
const COLUMNS = ["Pin", "Name", "Net"] as const;
/** How a pin on a net of its own reads in the table. */
export const NOT_CONNECTED = "(not connected)";

export interface PinoutPin {
  pin: string;
  name: string;
  net: string;
}

export interface PinoutConnector {
  ref: string;
  value: string;
  libId: string;
  pins: PinoutPin[];
}

export interface PinoutRow extends PinoutPin {
  ref: string;
  /** 1-based line in the markdown file. */
  line: number;
}

export interface PinoutTable {
  /** 1-based lines of the begin and end markers. */
  beginLine: number;
  endLine: number;
  /** The generated content changed since copperhead wrote it. */
  edited: boolean;
  rows: PinoutRow[];
}

const CONNECTOR_PREFIXES = new Set(["J", "P", "CN", "CON"]);

export function isConnector(component: Component): boolean {
  const prefix = /^[A-Za-z]+/.exec(component.ref)?.[0]?.toUpperCase() ?? "";
  return CONNECTOR_PREFIXES.has(prefix) || /connector/i.test(component.libId.split(":")[0] ?? "");
}

/** The connectors of a design with their pins, in natural ref order. */
export function pinoutConnectors(design: { components: readonly Component[]; netlist: Netlist }): PinoutConnector[] {
  const pinsByRef = new Map<string, PinoutPin[]>();
  for (const net of design.netlist.nets) {
    for (const node of net.nodes) {
      const pins = pinsByRef.get(node.ref) ?? [];
      pins.push({
        pin: node.pin,
        name: node.pinfunction ?? "",
        net: net.name.startsWith("unconnected-(") ? NOT_CONNECTED : net.name,
      });
      pinsByRef.set(node.ref, pins);
    }
  }
  return design.components
    .filter(isConnector)
    .map((c) => ({
      ref: c.ref,
      value: c.value,
      libId: c.libId,
      pins: (pinsByRef.get(c.ref) ?? []).sort((a, b) => naturalCompare(a.pin, b.pin)),
    }))
    .sort((a, b) => naturalCompare(a.ref, b.ref));
}

function pinoutHash(connectors: readonly PinoutConnector[]): string {
  return contentHash(connectors.flatMap((c) => c.pins.map((p) => [c.ref, p.pin, p.name, p.net])));
}

/** Reads the generated tables out of a PINOUT.md; undefined when it has no markers. */
export function parsePinout(markdown: string, file: string = `docs/${PINOUT_FILE}`): PinoutTable | undefined {
  const lines = markdown.split(/\r?\n/);
  const region = findGeneratedRegion(lines, REGION, file);
  if (!region) return undefined;
  const rows: PinoutRow[] = [];
  let ref: string | undefined;
  for (let i = region.begin + 1; i < region.end; i++) {
    const text = lines[i]!.trim();
    const heading = /^#{2,6}\s+(\S+)/.exec(text);
    if (heading) {
      ref = heading[1]!.replace(/:$/, "");
      continue;
    }
    if (!ref || !text.startsWith("|")) continue;
    const cells = splitTableRow(text);
    if (isRuleRow(cells) || cells[0] === COLUMNS[0]) continue;
    rows.push({ ref, pin: cells[0] ?? "", name: cells[1] ?? "", net: cells[2] ?? "", line: i + 1 });
  }
  const byRef = new Map<string, PinoutConnector>();
  for (const row of rows) {
    const connector = byRef.get(row.ref) ?? { ref: row.ref, value: "", libId: "", pins: [] };
    connector.pins.push(row);
    byRef.set(row.ref, connector);
  }
  const hash = pinoutHash([...byRef.values()]);
  return {
    beginLine: region.begin + 1,
    endLine: region.end + 1,
    edited: region.storedHash !== undefined && region.storedHash !== hash,
    rows,
  };
}

/** The whole PINOUT.md for a design; with `existing`, everything outside the markers is kept. */
export function renderPinout(
  design: { project: { name: string }; components: readonly Component[]; netlist: Netlist },
  existing?: string,
): string {
  const region = renderRegion(pinoutConnectors(design));
  if (existing === undefined) return [...preamble(design.project.name), ...region, ""].join("\n");
  return replaceGeneratedRegion(existing, REGION, region, `docs/${PINOUT_FILE}`);
}

function renderRegion(connectors: readonly PinoutConnector[]): string[] {
  const out = [beginMarker(REGION, pinoutHash(connectors))];
  if (connectors.length === 0) out.push("", "The design has no connectors.", "");
  for (const c of connectors) {
    out.push(
      "",
      `### ${c.ref}: ${c.value}${c.libId ? ` (\`${c.libId}\`)` : ""}`,
      "",
      tableRow(COLUMNS),
      tableRule(COLUMNS.length),
    );
    for (const p of c.pins) out.push(tableRow([p.pin, p.name, p.net]));
  }
  if (connectors.length > 0) out.push("");
  out.push(endMarker(REGION));
  return out;
}

function preamble(projectName: string): string[] {
  return [
    `# Connector pinout: ${projectName}`,
    "",
    "The tables between the copperhead markers are generated from the schematic: every connector's",
    "pins, their names and the nets they are on. Change the design, not these rows. `copperhead init`",
    "and `copperhead do` regenerate them, and `copperhead check` reports any row that disagrees with",
    "the design. Text outside the markers is yours; copperhead never touches it.",
    "",
  ];
}

/** One way PINOUT.md disagrees with the design. */
export interface PinoutDifference {
  ref: string;
  pin: string;
  what: "missing" | "extra" | "name" | "net";
  /** What the doc says, and what the design has. */
  claim: string;
  actual: string;
  /** 1-based line of the row, when the doc has one. */
  line?: number;
}

/** Every row of the doc that disagrees with the design's connectors, in design order. */
export function pinoutDifferences(connectors: readonly PinoutConnector[], table: PinoutTable): PinoutDifference[] {
  const key = (ref: string, pin: string) => `${ref}\u001f${pin}`;
  const rows = new Map(table.rows.map((r) => [key(r.ref, r.pin), r]));
  const out: PinoutDifference[] = [];
  const seen = new Set<string>();
  for (const c of connectors) {
    for (const p of c.pins) {
      const k = key(c.ref, p.pin);
      seen.add(k);
      const row = rows.get(k);
      if (!row)
        out.push({
          ref: c.ref,
          pin: p.pin,
          what: "missing",
          claim: "no row",
          actual: `${p.name || p.pin} on ${p.net}`,
        });
      else if (row.net !== p.net)
        out.push({ ref: c.ref, pin: p.pin, what: "net", claim: row.net, actual: p.net, line: row.line });
      else if (row.name !== p.name)
        out.push({ ref: c.ref, pin: p.pin, what: "name", claim: row.name, actual: p.name, line: row.line });
    }
  }
  for (const row of table.rows) {
    if (!seen.has(key(row.ref, row.pin)))
      out.push({
        ref: row.ref,
        pin: row.pin,
        what: "extra",
        claim: `${row.name || row.pin} on ${row.net}`,
        actual: "no such connector pin",
        line: row.line,
      });
  }
  return out;
}
