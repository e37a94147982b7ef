/**
 * The one way design files are read and written: as bytes, never through a text codec, so a
 * byte the tree did not touch is written back exactly as it was read.
 *
 * `readDesignBytes` is the single place a design file's path becomes bytes. It reads through
 * the repo's confined reader (src/repo/repo-files.ts): the file must resolve inside
 * `options.within` (the repo root; by default the file's own folder; `null` for a stock library
 * outside any repo), be a regular file and stay under the design-file size cap. `writeSexprFile`
 * is the single place one is written, whole or not at all.
 */
import { dirname, resolve } from "node:path";
import { writeFileAtomic } from "../../repo/atomic-write.ts";
import { readRepoBytes, type ReadOptions } from "../../repo/repo-files.ts";
import { decodeLossless } from "./bytes.ts";
import { parseSexpr } from "./parse.ts";
import { printSexprBytes } from "./print.ts";
import type { SDocument } from "./tree.ts";

/** The bytes of a design file (a path relative to the working directory, or absolute). */
export function readDesignBytes(path: string, options?: ReadOptions): Uint8Array {
  const abs = resolve(path);
  return readRepoBytes(abs, options ?? { within: dirname(abs) });
}

/** A design file as a lossless string, for scanning its text (see `bytes.ts`). */
export function readDesignText(path: string, options?: ReadOptions): string {
  return decodeLossless(readDesignBytes(path, options));
}

/** Reads and parses an S-expression design file; parse errors name the file. */
export function readSexprFile(path: string, options?: ReadOptions): SDocument {
  return parseSexpr(readDesignBytes(path, options), { file: path });
}

/**
 * Writes a document (or bytes printed from one) to a design file, byte for byte, atomically:
 * the original stays whole until the new bytes are complete (`writeFileAtomic`), keeping its mode.
 */
export function writeSexprFile(path: string, content: SDocument | Uint8Array): void {
  writeFileAtomic(resolve(path), content instanceof Uint8Array ? content : printSexprBytes(content));
}
