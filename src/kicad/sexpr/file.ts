/**
 * The one way design files are read and written: as bytes, never through a text codec, so a
 * byte the tree did not touch is written back exactly as it was read.
 *
 * `readDesignBytes` is the single place a design file's path becomes bytes; checks on what
 * may be read (confinement, size) belong there.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { decodeLossless } from "./bytes.ts";
import { parseSexpr } from "./parse.ts";
import { printSexprBytes } from "./print.ts";
import type { SDocument } from "./tree.ts";

/** The bytes of a design file. */
export function readDesignBytes(path: string): Uint8Array {
  return readFileSync(path);
}

/** A design file as a lossless string, for scanning its text (see `bytes.ts`). */
export function readDesignText(path: string): string {
  return decodeLossless(readDesignBytes(path));
}

/** Reads and parses an S-expression design file; parse errors name the file. */
export function readSexprFile(path: string): SDocument {
  return parseSexpr(readDesignBytes(path), { file: path });
}

/** Writes a document (or bytes printed from one) to a design file, byte for byte. */
export function writeSexprFile(path: string, content: SDocument | Uint8Array): void {
  writeFileSync(path, content instanceof Uint8Array ? content : printSexprBytes(content));
}
