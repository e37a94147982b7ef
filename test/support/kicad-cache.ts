/**
 * kicad-cli results on the read-only corpora, cached by content.
 *
 * A corpus project never changes, so raw DRC of it is the same every time: the first run calls
 * the real kicad-cli and stores its report under `node_modules/.cache/copperhead-kicad/`, keyed
 * by the KiCad version, the question asked and every byte of the project's folder. Later runs —
 * and other test files asking the same question — read it back instead of spending up to
 * minutes per board again (`vme-wren`'s DRC). Any change to the files or to KiCad misses.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { runDrc, type DrcResult, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";

const CACHE = resolve(import.meta.dir, "..", "..", "node_modules", ".cache", "copperhead-kicad");

/** Raw DRC with schematic parity and every severity, of a board whose folder is `root`. */
export function cachedParityDrc(cli: KicadCli, root: string, board: string, timeoutMs: number): Promise<DrcResult> {
  return cached(root, `${cli.version.raw}\npcb drc --schematic-parity --severity-all\n${relative(root, board)}`, () => runDrc(board, { cli, schematicParity: true, timeoutMs }));
}

async function cached<T>(root: string, question: string, compute: () => Promise<T>): Promise<T> {
  const file = join(CACHE, `${folderKey(root, question)}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, "utf8")) as T;
  const result = await compute();
  mkdirSync(CACHE, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(result));
  renameSync(tmp, file);
  return result;
}

/** A hash of `question` and every file below `root` (names and bytes), hidden ones excluded. */
function folderKey(root: string, question: string): string {
  const hash = createHash("sha256").update(question);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) hash.update(`\n${relative(root, path)}\n`).update(readFileSync(path));
    }
  };
  walk(root);
  return hash.digest("hex");
}
