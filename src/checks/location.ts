/**
 * How a finding's location reads, wherever a person reads it: the text report, JUnit bodies in
 * a CI dashboard, and the findings a gated run hands back to the model or writes to its summary.
 */
import type { FindingLocation } from "./types.ts";

/**
 * `board.kicad_pcb:120 · U1 pin 5 · net GND · sheet /Power/ · at (10.5, 20)`: the file position
 * first (terminals and editors make `file:line` clickable), then the design coordinates an
 * engineer looks for in KiCad.
 */
export function describeLocation(loc: FindingLocation): string {
  return locationParts(loc).join(" · ");
}

/** The pieces of `describeLocation`, for layouts that wrap between them. */
export function locationParts(loc: FindingLocation): string[] {
  let position = loc.file;
  if (loc.line !== undefined) position += `:${loc.line}`;
  if (loc.line !== undefined && loc.column !== undefined) position += `:${loc.column}`;
  const parts = [position];
  if (loc.ref !== undefined) parts.push(loc.pin !== undefined ? `${loc.ref} pin ${loc.pin}` : loc.ref);
  else if (loc.pin !== undefined) parts.push(`pin ${loc.pin}`);
  if (loc.net !== undefined) parts.push(`net ${loc.net}`);
  if (loc.sheet !== undefined) parts.push(`sheet ${loc.sheet}`);
  if (loc.x !== undefined && loc.y !== undefined) parts.push(`at (${loc.x}, ${loc.y})`);
  return parts;
}
