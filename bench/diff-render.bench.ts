/**
 * `copperhead diff --render` on one committed change (a resistor's value, in the schematic and
 * on the board, as KiCad's "Update PCB from Schematic" leaves it) against what any render of
 * that sheet costs at the least: one raw `kicad-cli sch export svg` of the same schematic. Each
 * project sits in a subfolder of its repository, as real ones do. Reports wall time and peak
 * memory (the largest process, through /usr/bin/time) side by side. Targets: ≤ 3 s and
 * ≤ 400 MB on the 3–4 MB corpus boards (an idle 2-core machine; the ratio to raw kicad-cli is
 * what carries over to a loaded one).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { findKicadCli } from "../src/kicad/cli/kicad-cli.ts";
import { runGit } from "../src/repo/git.ts";
import { BoardEdit } from "../test/support/board-edits.ts";
import { corpusDir } from "../test/support/corpora.ts";
import { median, ms, ratio, report } from "./lib/measure.ts";

const BINARY = resolve(import.meta.dir, "../dist/copperhead");
const ROUNDS = 3;

const PROJECTS = [
  { name: "glasgow-revc3", dir: "glasgow-revc3", project: "hardware/boards/glasgow/glasgow" },
  { name: "bms-c1", dir: "bms-c1", project: "kicad/bms-c1" },
];

async function git(repo: string, ...args: string[]): Promise<void> {
  const r = await runGit(repo, ["-c", "user.name=bench", "-c", "user.email=bench@localhost", ...args]);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
}

/** Wall seconds and peak resident kilobytes of one command, from GNU time. */
async function measured(cmd: string[]): Promise<{ seconds: number; kb: number }> {
  const proc = Bun.spawn(["/usr/bin/time", "-f", "%e %M", ...cmd], { stdout: "ignore", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}: ${stderr.slice(-500)}`);
  const [seconds, kb] = stderr.trim().split("\n").at(-1)!.split(" ").map(Number);
  return { seconds: seconds!, kb: kb! };
}

/** Sets the Value of the first resistor placed on the root sheet, and of its footprint. */
function changeOneValue(schematic: string, board: string): string {
  const text = readFileSync(schematic, "utf8");
  const ref = /\(property "Reference" "(R\d+)"/.exec(text)![1]!;
  const at = text.indexOf(`(property "Reference" "${ref}"`);
  const value = text.indexOf('(property "Value" "', at) + '(property "Value" "'.length;
  writeFileSync(schematic, `${text.slice(0, value)}BENCH${text.slice(text.indexOf('"', value))}`);
  const edit = new BoardEdit(board);
  edit.setValue(ref, "BENCH");
  edit.save();
  return ref;
}

export async function benchDiffRender(): Promise<void> {
  const cli = await findKicadCli();
  report(
    `diff --render: one value changed and committed, copperhead vs raw kicad-cli ${cli.version.raw} sch export svg of the same schematic`,
  );
  for (const p of PROJECTS) {
    const repo = mkdtempSync(join(tmpdir(), "copperhead-bench-render-"));
    try {
      cpSync(join(corpusDir(), p.dir), join(repo, "hw"), { recursive: true });
      const stem = join(repo, "hw", p.project);
      await git(repo, "init", "-q");
      await git(repo, "add", "-A");
      await git(repo, "commit", "-qm", "design");
      const ref = changeOneValue(`${stem}.kicad_sch`, `${stem}.kicad_pcb`);
      await git(repo, "commit", "-qam", `${ref} value`);
      const ours: { seconds: number; kb: number }[] = [];
      const raw: { seconds: number; kb: number }[] = [];
      for (let round = 0; round <= ROUNDS; round++) {
        const out = join(repo, `render-${round}`);
        const plots = join(repo, `plots-${round}`);
        const a = await measured([
          BINARY,
          "diff",
          "--repo",
          join(repo, "hw"),
          "--base",
          "HEAD~1",
          "--head",
          "HEAD",
          "--render",
          out,
          "--json",
        ]);
        const b = await measured([
          cli.path,
          "sch",
          "export",
          "svg",
          "--no-background-color",
          "-o",
          plots,
          `${stem}.kicad_sch`,
        ]);
        // The first round warms the caches of both; it is not counted.
        if (round > 0) {
          ours.push(a);
          raw.push(b);
        }
        rmSync(out, { recursive: true, force: true });
        rmSync(plots, { recursive: true, force: true });
      }
      const seconds = median(ours.map((s) => s.seconds));
      const rawSeconds = median(raw.map((s) => s.seconds));
      const mb = Math.max(...ours.map((s) => s.kb)) / 1024;
      const rawMb = Math.max(...raw.map((s) => s.kb)) / 1024;
      report(
        `  ${p.name.padEnd(14)} copperhead ${ms(seconds * 1000).padStart(9)} ${`${mb.toFixed(0)} MB`.padStart(7)}   kicad-cli ${ms(rawSeconds * 1000).padStart(9)} ${`${rawMb.toFixed(0)} MB`.padStart(7)}   ` +
          `${ratio(seconds / rawSeconds)}  ≤ 3 s: ${seconds <= 3 ? "met" : "MISSED"}, ≤ 400 MB: ${mb <= 400 ? "met" : "MISSED"}`,
      );
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  }
}

if (import.meta.main) await benchDiffRender();
