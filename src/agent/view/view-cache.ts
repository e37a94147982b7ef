/**
 * What the `view` tool keeps between calls, under `.copperhead/cache/`: the PNG and legend of
 * each view it answered, keyed by the content of the files drawn (the schematic's sheets or the
 * board, and the project file), the question, KiCad's install and copperhead's version; and the
 * latest kicad-cli plot of each document, keyed the same way without the question, so a second
 * region of an unchanged design is cut out of the plot it already has.
 *
 * The key is computed from the files' bytes alone, without loading the design: the sheets a
 * schematic reaches are found by their `Sheetfile` properties in the raw text. An unchanged
 * design therefore re-views in the time it takes to hash its files.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { CACHE_DIR, openCache, readCache, writeCache } from "../../checks/cache.ts";
import { kicadInstallStamp } from "../../kicad/cli/install.ts";
import type { KicadProject } from "../../repo/project.ts";
import { ownFolder, readRepoBytes, readRepoText } from "../../repo/repo-files.ts";
import { lstatOrUndefined, repoRelative } from "../../repo/repo-path.ts";
import { VERSION } from "../../version.ts";

export type Document = "schematic" | "board";

/** Content key of one document of the project as kicad-cli would plot it. */
export function documentKey(project: KicadProject, document: Document): string {
  const hash = createHash("sha256").update(`copperhead ${VERSION}\n${kicadInstallStamp()}\n${document}\n`);
  const files = document === "board" ? [project.board!] : sheetClosure(project.schematic, project.repoRoot);
  for (const file of [project.projectFile, ...files]) {
    hash.update(`${repoRelative(project.repoRoot, file)}\n`);
    hash.update(existsSync(file) ? readRepoBytes(file, { within: project.repoRoot }) : "absent");
    hash.update("\n");
  }
  return hash.digest("hex");
}

/** The root schematic and every sheet file it reaches, found by name in the raw text. */
function sheetClosure(root: string, within: string): string[] {
  const seen = new Set<string>();
  const queue = [resolve(root)];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    const source = readRepoBytes(file, { within }).toString("utf8");
    for (const m of source.matchAll(/\(property "Sheet ?file" "((?:[^"\\]|\\.)*)"/g))
      queue.push(resolve(dirname(file), m[1]!.replace(/\\(.)/g, "$1")));
  }
  return [...seen].sort();
}

/** A view as the tool returns it: the picture and what is in it. */
export interface CachedView {
  legend: unknown;
  /** PNG, base64. */
  png: string;
}

export function viewKey(document: string, question: unknown): string {
  return createHash("sha256")
    .update(`${document}\n${JSON.stringify(question)}`)
    .digest("hex");
}

export function readView(repoRoot: string, key: string): CachedView | undefined {
  return readCache<CachedView>(openCache(repoRoot), `view-${key}`);
}

export function writeView(repoRoot: string, key: string, view: CachedView): void {
  writeCache(openCache(repoRoot), `view-${key}`, view);
}

/**
 * The folder holding the plot of `document` with content `key`, made by `plot` into a fresh
 * folder when it is not there. Only the newest plot of each document is kept: a plot of a
 * large design is tens of megabytes, and an edited design is not plotted as it was again.
 * The folders are confined like the rest of the cache (`openCache`, `ownFolder`): a committed
 * link in their place is `bad_path`, never written through or emptied.
 */
export async function plotFolder(
  repoRoot: string,
  document: Document,
  key: string,
  plot: (dir: string) => Promise<void>,
): Promise<string> {
  const cache = openCache(repoRoot);
  const base = ownFolder(repoRoot, `${CACHE_DIR}/plots`);
  const dir = join(base, `${document}-${key}`);
  // A plot is trusted only as a real folder that copperhead finished here; a link in its place,
  // or a folder that came with the repository, is not one.
  const done = `${CACHE_DIR}/plots/${document}-${key}/done`;
  if (
    cache &&
    !cache.tracked.has(done) &&
    lstatOrUndefined(dir)?.isDirectory() &&
    lstatOrUndefined(join(dir, "done"))?.isFile()
  )
    return dir;
  const scratch = `${dir}.${process.pid}.tmp`;
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  try {
    await plot(scratch);
    writeFileSync(join(scratch, "done"), "");
    for (const old of existsSync(base) ? readdirSync(base) : []) {
      if (old.startsWith(`${document}-`) && !old.endsWith(".tmp"))
        rmSync(join(base, old), { recursive: true, force: true });
    }
    renameSync(scratch, dir);
    return dir;
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }
}

/** A file of a plot folder, read confined to it (a link planted among the plots leads nowhere). */
export function plotFile(dir: string, name: string): string {
  return readRepoText(join(dir, name), { within: dir });
}
