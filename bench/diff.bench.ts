/**
 * The semantic diff of two states (a snapshot of HEAD against the working tree, each loaded,
 * netlisted and compared natively) against what a kicad-cli based diff needs at the least: one
 * `kicad-cli sch export netlist` per state. On the built-in board and the KiCad 8/9 projects of
 * the open-hardware corpus, with one part's value changed. Target: ≤ 1× (faster than just the
 * two netlist exports, while also comparing the board and the docs).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { runDiff } from "../src/commands/diff.ts";
import { exportNetlist, findKicadCli } from "../src/kicad/cli/kicad-cli.ts";
import { runGit } from "../src/repo/git.ts";
import { corpusDir } from "../test/support/corpora.ts";
import { compare, median, ms, ratio, report } from "./lib/measure.ts";

const PROJECTS = [
  { name: "usb-led", dir: "fixtures/usb-led", project: "usb-led.kicad_pro" },
  {
    name: "glasgow-revc3",
    dir: join(corpusDir(), "glasgow-revc3/hardware/boards/glasgow"),
    project: "glasgow.kicad_pro",
  },
  { name: "bms-c1", dir: join(corpusDir(), "bms-c1/kicad"), project: "bms-c1.kicad_pro" },
];

async function git(repo: string, ...args: string[]): Promise<void> {
  const r = await runGit(repo, ["-c", "user.name=bench", "-c", "user.email=bench@localhost", ...args]);
  if (r.code !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
}

export async function benchDiff(): Promise<void> {
  const cli = await findKicadCli();
  report(
    `diff: HEAD against the working tree (one value changed), native vs 2 × kicad-cli ${cli.version.raw} netlist export`,
  );
  const ratios: number[] = [];
  for (const p of PROJECTS) {
    const repo = join(mkdtempSync(join(tmpdir(), "copperhead-bench-")), basename(p.dir));
    try {
      cpSync(p.dir, repo, { recursive: true });
      await git(repo, "init", "-q");
      await git(repo, "add", "-A");
      await git(repo, "commit", "-qm", "bench");
      const root = join(repo, p.project.replace(/\.kicad_pro$/, ".kicad_sch"));
      const text = readFileSync(root, "latin1");
      const at = text.indexOf('(property "Value" "', text.indexOf("(symbol\n", text.indexOf("(lib_symbols") + 1000));
      writeFileSync(
        root,
        `${text.slice(0, at)}(property "Value" "BENCH${text.slice(at + '(property "Value" "'.length)}`,
        "latin1",
      );
      const result = await compare({
        native: () => runDiff({ repo, project: p.project }),
        "kicad-cli": async () => {
          await exportNetlist(root, { cli });
          await exportNetlist(root, { cli });
        },
      });
      const r = result.native!.median / result["kicad-cli"]!.median;
      ratios.push(r);
      report(
        `  ${p.name.padEnd(16)} native ${ms(result.native!.median).padStart(9)}  2 × kicad-cli ${ms(result["kicad-cli"]!.median).padStart(8)}  ${ratio(r)}`,
      );
    } finally {
      rmSync(join(repo, ".."), { recursive: true, force: true });
    }
  }
  report(
    `  median ratio native/kicad-cli: ${ratio(median(ratios), { max: 1 })}, worst ${ratio(Math.max(...ratios), { max: 1 })}`,
  );
}

if (import.meta.main) await benchDiff();
