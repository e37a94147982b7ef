/**
 * Failure-mode variants of the usb-led fixture, made at test time on a temp copy: each one
 * breaks exactly one thing, the way a person editing in KiCad might.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  children,
  child,
  insertChild,
  list,
  num,
  q,
  readSexprFile,
  removeChild,
  writeSexprFile,
  type SList,
} from "../../src/kicad/sexpr/index.ts";

export function editFile(path: string, edit: (text: string) => string): void {
  writeFileSync(path, edit(readFileSync(path, "utf8")));
}

/** Edits a KiCad file through the lossless engine, so everything not touched stays byte-identical. */
export function editTree(path: string, edit: (root: SList) => void): void {
  const doc = readSexprFile(path);
  edit(doc.root);
  writeSexprFile(path, doc);
}

/** Removes the schematic wire that has an end at (x, y) mm. */
export function removeWireAt(schematic: string, x: number, y: number): void {
  editTree(schematic, (root) => {
    const wire = children(root, "wire").find((w) =>
      children(child(w, "pts")!, "xy").some((xy) => num(xy, 1) === x && num(xy, 2) === y),
    );
    if (!wire) throw new Error(`no wire ends at (${x}, ${y}) in ${schematic}`);
    removeChild(root, wire);
  });
}

/** Removes the board footprint labelled `ref`. */
export function removeFootprint(board: string, ref: string): void {
  editTree(board, (root) => {
    const fp = children(root, "footprint").find((f) =>
      children(f, "property").some(
        (p) =>
          p.items[1]?.type === "atom" &&
          p.items[1].raw === '"Reference"' &&
          p.items[2]?.type === "atom" &&
          p.items[2].raw === `"${ref}"`,
      ),
    );
    if (!fp) throw new Error(`no footprint ${ref} in ${board}`);
    removeChild(root, fp);
  });
}

/** Raises the Default net class clearance in the .kicad_pro, so existing copper violates it. */
export function setDefaultClearance(repo: string, mm: number): void {
  const path = join(repo, "usb-led.kicad_pro");
  const project = JSON.parse(readFileSync(path, "utf8"));
  project.net_settings.classes[0].clearance = mm;
  writeFileSync(path, JSON.stringify(project, null, 2) + "\n");
}

/**
 * Leaves the LDO's EN input (U1 pin 3) unconnected — in the schematic and, consistently, on the
 * board (its tie track removed, its pad on the single-pin net KiCad would name) — so only ERC
 * has something to say.
 */
export function disconnectLdoEnable(repo: string): void {
  removeWireAt(join(repo, "regulator.kicad_sch"), 119.38, 76.2);
  editTree(join(repo, "usb-led.kicad_pcb"), (root) => {
    const stub = children(root, "segment").find(
      (s) => num(child(s, "start")!, 1) === 119.8625 && num(child(s, "start")!, 2) === 93.45,
    );
    if (!stub) throw new Error("the EN tie track moved; update this variant");
    removeChild(root, stub);
    const nets = children(root, "net");
    const code = Math.max(...nets.map((n) => num(n, 1)!)) + 1;
    const name = "unconnected-(U1-EN-Pad3)";
    insertChild(root, list("net", code, q(name)), root.items.indexOf(nets[nets.length - 1]!) + 1);
    const u1 = children(root, "footprint").find((f) =>
      children(f, "property").some((p) => p.items[2]?.type === "atom" && p.items[2].raw === '"U1"'),
    )!;
    const pad = children(u1, "pad").find((p) => p.items[1]?.type === "atom" && p.items[1].raw === '"3"')!;
    const net = child(pad, "net")!;
    net.items.splice(
      1,
      net.items.length - 1,
      { type: "atom", pre: " ", raw: String(code) },
      { type: "atom", pre: " ", raw: JSON.stringify(name) },
    );
  });
}
