/**
 * The schematic changes board-sync tests make to a copy of the usb-led fixture. Each leaves a
 * schematic kicad-cli loads with a clean ERC: new symbols get lib symbols, uuids, instance paths
 * and connections; removed ones take their wires and power symbols along.
 */
import { join } from "node:path";
import { child, q, setAtom, text } from "../../src/kicad/sexpr/index.ts";
import { openLibraries } from "../../src/kicad/library/libraries.ts";
import { SchematicEdit } from "./schematic-edit.ts";

export const ROOT_PATH = "/a4b594f4-4145-5761-b0f0-3b9951eed732";
export const REGULATOR_PATH = `${ROOT_PATH}/f6ecdb61-0c8b-5a62-8b68-b33506e9342f`;

export function rootSheet(dir: string): SchematicEdit {
  return new SchematicEdit(join(dir, "usb-led.kicad_sch"));
}

export function regulatorSheet(dir: string): SchematicEdit {
  return new SchematicEdit(join(dir, "regulator.kicad_sch"));
}

/** R4 (10k, 0603) between the LED_A label and GND, right of the LED. */
export function addResistor(dir: string): void {
  const root = rootSheet(dir);
  root.addCopy(root.symbol("R3"), { ref: "R4", x: 180.34, y: 101.6, instancePath: ROOT_PATH, value: "10k" });
  root.addLabel("LED_A", 180.34, 97.79);
  root.addCopy(root.symbol("#PWR06"), { ref: "#PWR11", x: 180.34, y: 105.41, instancePath: ROOT_PATH });
  root.save();
}

/** The wires that tie J2 (the 3V3 output header) to +3V3 and GND in the root sheet. */
function detachHeader(root: SchematicEdit): void {
  root.remove(root.symbol("#PWR07"));
  root.removeWire(142.24, 81.28, 152.4, 81.28);
  root.removeWire(152.4, 81.28, 152.4, 83.82);
  root.removeWire(152.4, 83.82, 157.48, 83.82);
  root.removeWire(157.48, 86.36, 154.94, 86.36);
  root.removeWire(154.94, 86.36, 154.94, 91.44);
}

/** Deletes J2 and its wiring. */
export function deleteHeader(dir: string): void {
  const root = rootSheet(dir);
  root.remove(root.symbol("J2"));
  detachHeader(root);
  root.save();
}

export function setField(dir: string, ref: string, name: string, value: string): void {
  const root = rootSheet(dir);
  root.setField(ref, name, value);
  root.save();
}

/** Renames the root sheet's LED_A labels, which renames the net /LED_A. */
export function renameLedNet(dir: string, to: string): void {
  const root = rootSheet(dir);
  if (root.renameLabels("LED_A", to) === 0) throw new Error("no LED_A label");
  root.save();
}

/**
 * Cuts J2 from the root sheet and pastes it (same uuid, same reference) into the Regulator
 * sheet, wired to VOUT (+3V3) and a GND symbol there: the nets stay, the sheet changes.
 */
export async function moveHeaderToRegulator(dir: string): Promise<void> {
  const root = rootSheet(dir);
  const regulator = regulatorSheet(dir);
  const j2 = root.symbol("J2");
  root.remove(j2);
  detachHeader(root);
  regulator.addLibSymbol((await openLibraries(dir)).resolveSymbol("Connector_Generic:Conn_01x02"));
  const moved = regulator.addCopy(j2, { ref: "J2", x: 162.56, y: 73.66, instancePath: REGULATOR_PATH });
  setAtom(child(moved, "uuid")!, 1, q(text(child(j2, "uuid")!, 1)!));
  regulator.addWire(154.94, 73.66, 157.48, 73.66);
  regulator.addCopy(regulator.symbol("#PWR010"), { ref: "#PWR11", x: 157.48, y: 76.2, instancePath: REGULATOR_PATH });
  root.save();
  regulator.save();
}
