/**
 * kicad-cli results on the read-only corpora, cached by content.
 *
 * A corpus project never changes, so raw ERC and DRC of it are the same every time: the first
 * run calls the real kicad-cli and stores its report under `node_modules/.cache/copperhead-kicad/`,
 * keyed by the KiCad version, the question asked and every byte of the project's folder. Later
 * runs — and other test files asking the same question — read it back instead of spending up to
 * minutes per board again (`vme-wren`'s DRC). Any change to the files or to KiCad misses.
 *
 * Test files run in parallel workers, and two of them ask for vme-wren's DRC at about the same
 * time on a cold machine. The first to ask takes a lock file and computes; the other waits for
 * the report instead of running a second DRC of its own beside it (which would slow both).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { runDrc, runErc, type DrcResult, type ErcReport, type KicadCli } from "../../src/kicad/cli/kicad-cli.ts";

const CACHE = resolve(import.meta.dir, "..", "..", "node_modules", ".cache", "copperhead-kicad");
/** How often a waiting worker looks for the report another one is computing. */
const POLL_MS = 1_000;

/** Raw DRC with schematic parity and every severity, of a board whose folder is `root`. */
export function cachedParityDrc(cli: KicadCli, root: string, board: string, timeoutMs: number): Promise<DrcResult> {
  return cached(root, `${cli.version.raw}\npcb drc --schematic-parity --severity-all\n${relative(root, board)}`, () =>
    runDrc(board, { cli, schematicParity: true, timeoutMs }),
  );
}

/** Raw ERC with every severity, of a schematic whose folder is `root`. */
export function cachedErc(cli: KicadCli, root: string, schematic: string, timeoutMs: number): Promise<ErcReport> {
  return cached(root, `${cli.version.raw}\nsch erc --severity-all\n${relative(root, schematic)}`, () =>
    runErc(schematic, { cli, timeoutMs }),
  );
}

async function cached<T>(root: string, question: string, compute: () => Promise<T>): Promise<T> {
  const file = join(CACHE, `${folderKey(root, question)}.json`);
  mkdirSync(CACHE, { recursive: true });
  const lock = `${file}.lock`;
  while (!existsSync(file)) {
    if (!takeLock(lock)) {
      await Bun.sleep(POLL_MS);
      continue;
    }
    try {
      const result = await compute();
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(result));
      renameSync(tmp, file);
      return result;
    } finally {
      rmSync(lock, { force: true });
    }
  }
  return JSON.parse(readFileSync(file, "utf8")) as T;
}

/**
 * Takes the lock file, or says another live process holds it. A lock left by a process that
 * died (a killed run) is removed, so the next asker computes.
 */
function takeLock(lock: string): boolean {
  try {
    writeFileSync(lock, String(process.pid), { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  let holder: number;
  try {
    // Empty while its writer is still between creating the file and writing its pid.
    holder = Number(readFileSync(lock, "utf8") || NaN);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    return takeLock(lock); // released meanwhile
  }
  if (Number.isNaN(holder) || alive(holder)) return false;
  rmSync(lock, { force: true });
  return takeLock(lock);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
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
