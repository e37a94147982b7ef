/**
 * The two real-world corpora every fidelity test runs over:
 *
 * - KiCad's own demo projects (Debian package `kicad-demos`, installed by
 *   `scripts/setup.sh --test` to `/usr/share/kicad/demos`);
 * - the open-hardware corpus beside the checkout (`../shared/corpus`: eight projects saved by
 *   KiCad 6, 7, 8 and 9, each with its licence);
 * - the boards this repository adds to it (`fixtures/corpus`, see its README): dense and poured
 *   real boards the board-editing acceptance runs on too.
 *
 * Both are read-only: a test that runs anything that writes copies the project first
 * (`copyCorpusProject`). A missing corpus is a loud failure, never a skip.
 */
import { cpSync, existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { makeTempDir } from "./kicad.ts";

export type CorpusName = "demos" | "corpus" | "fixtures";

export interface CorpusProject {
  /** Which corpus it belongs to. */
  corpus: CorpusName;
  /** A short, stable id for test names: `demos/pic_programmer`, `corpus/bms-c1`, `fixtures/sofle-v2-soldered`. */
  id: string;
  /** Absolute path of the folder that is copied as a unit (the demo folder, the corpus entry). */
  root: string;
  /** The `.kicad_pro`, relative to `root`. */
  projectFile: string;
  /** Absolute paths of the root schematic and the board, each when the project has one. */
  schematic?: string;
  board?: string;
}

const REPO_DIR = resolve(import.meta.dir, "..", "..");

/** Where the KiCad demos are installed; `COPPERHEAD_DEMOS_DIR` overrides. */
export function demosDir(): string {
  const dir = process.env.COPPERHEAD_DEMOS_DIR ?? "/usr/share/kicad/demos";
  if (!existsSync(dir)) {
    throw new Error(
      `KiCad's demo projects are not installed at ${dir}. Run \`bash scripts/setup.sh --test\` ` +
        "(it installs the Debian package kicad-demos from bookworm-backports), or set COPPERHEAD_DEMOS_DIR.",
    );
  }
  return dir;
}

/**
 * The open-hardware corpus: `COPPERHEAD_CORPUS_DIR`, else the nearest `shared/corpus` beside
 * the checkout or one of its parents (a clone in a temp dir finds the workplace's copy).
 */
export function corpusDir(): string {
  const explicit = process.env.COPPERHEAD_CORPUS_DIR;
  const candidates = explicit ? [explicit] : [];
  if (!explicit) {
    for (let dir = REPO_DIR; dirname(dir) !== dir; dir = dirname(dir))
      candidates.push(join(dirname(dir), "shared", "corpus"));
    candidates.push("/work/shared/corpus");
  }
  const found = candidates.find((dir) => existsSync(join(dir, "MANIFEST.tsv")));
  if (!found) {
    throw new Error(
      `The open-hardware corpus was not found (looked in ${candidates.join(", ")}). Set COPPERHEAD_CORPUS_DIR to its folder.`,
    );
  }
  return found;
}

function findProjects(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith(".")) continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && entry.name.endsWith(".kicad_pro")) found.push(path);
    }
  };
  walk(dir);
  return found;
}

function describeProject(corpus: CorpusName, root: string, pro: string, id: string): CorpusProject {
  const stem = pro.slice(0, -".kicad_pro".length);
  const schematic = `${stem}.kicad_sch`;
  const board = `${stem}.kicad_pcb`;
  return {
    corpus,
    id,
    root,
    projectFile: relative(root, pro),
    schematic: existsSync(schematic) ? schematic : undefined,
    board: existsSync(board) ? board : undefined,
  };
}

/** Every demo project; a demo folder with several projects yields one entry per project. */
export function demoProjects(): CorpusProject[] {
  const dir = demosDir();
  return findProjects(dir).map((pro) => {
    const top = relative(dir, pro).split("/")[0]!;
    const root = join(dir, top);
    const id = `demos/${relative(dir, pro).replace(/\.kicad_pro$/, "")}`;
    return describeProject("demos", statSync(root).isDirectory() ? root : dir, pro, id);
  });
}

/** Every project of a corpus folder of MANIFEST entries, one per entry. */
function manifestProjects(corpus: CorpusName, dir: string): CorpusProject[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .flatMap((name) =>
      findProjects(join(dir, name)).map((pro) => describeProject(corpus, join(dir, name), pro, `${corpus}/${name}`)),
    );
}

/** Every project of the open-hardware corpus, one per entry of its MANIFEST. */
export function corpusProjects(): CorpusProject[] {
  return manifestProjects("corpus", corpusDir());
}

/** The real boards this repository keeps in `fixtures/corpus` (each with its licence and source commit). */
export function fixtureCorpusProjects(): CorpusProject[] {
  return manifestProjects("fixtures", join(REPO_DIR, "fixtures", "corpus"));
}

/** Both corpora, demos first. */
export function allProjects(): CorpusProject[] {
  return [...demoProjects(), ...corpusProjects()];
}

/** Every project: {@link allProjects} and the repository's own corpus. */
export function everyProject(): CorpusProject[] {
  return [...allProjects(), ...fixtureCorpusProjects()];
}

/**
 * Copies a project's folder into a fresh temp dir (removed by `cleanupTempDirs`) and returns the
 * project as it lies in the copy.
 */
export async function copyCorpusProject(project: CorpusProject): Promise<CorpusProject> {
  const dest = join(await makeTempDir(), basename(project.root));
  cpSync(project.root, dest, { recursive: true });
  const at = (path: string) => join(dest, relative(project.root, path));
  return {
    ...project,
    root: dest,
    schematic: project.schematic && at(project.schematic),
    board: project.board && at(project.board),
  };
}
