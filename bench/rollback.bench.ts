/**
 * Rollback of a typical `do` run on the usb-led fixture: its 3 design files (root schematic,
 * regulator sheet, board) rewritten, 2 docs rewritten and a change proposal created in a new
 * folder. Only `rollback()` is timed; every round checks the tree came back byte-identical.
 * Target: median ≤ 100 ms, the budget a failed run may spend putting the tree back.
 */
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RunJournal } from "../src/repo/journal.ts";
import { withRepoLock } from "../src/repo/lock.ts";
import { newRunId, runDir } from "../src/repo/run-dir.ts";
import { median, ms, ratio, report } from "./lib/measure.ts";

const FIXTURE = join(import.meta.dir, "../fixtures/usb-led");
const DESIGN = ["usb-led.kicad_sch", "regulator.kicad_sch", "usb-led.kicad_pcb"];
const DOCS: Record<string, string> = {
  "docs/SPEC.md": `# usb-led\n\n## Requirements\n\n${Array.from({ length: 20 }, (_, i) => `- REQ-${i + 1}: requirement ${i + 1}\n  check: net_exists(NET_${i})`).join("\n")}\n`,
  "docs/BOM.md": `# BOM\n\n| Ref | Value | Footprint |\n|---|---|---|\n${Array.from({ length: 40 }, (_, i) => `| R${i + 1} | 10k | Resistor_SMD:R_0603_1608Metric |`).join("\n")}\n`,
  "docs/CHANGELOG.md": `# Changelog\n\n${Array.from({ length: 30 }, (_, i) => `## run ${i}\n\n- a change\n`).join("\n")}`,
};
const ROUNDS = 15;

export async function benchRollback(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "copperhead-bench-rollback-"));
  try {
    cpSync(FIXTURE, root, { recursive: true });
    mkdirSync(join(root, "docs"));
    for (const [path, text] of Object.entries(DOCS)) writeFileSync(join(root, path), text);
    const files = [...DESIGN, ...Object.keys(DOCS)];
    const before = fingerprint(root, files);
    const bytes = files.reduce((sum, f) => sum + readFileSync(join(root, f)).length, 0);

    const times: number[] = [];
    await withRepoLock(root, () => {
      for (let round = 0; round <= ROUNDS; round++) {
        const elapsed = timedRollback(root);
        if (round > 0) times.push(elapsed); // round 0 warms up
        if (fingerprint(root, files) !== before)
          throw new Error(`round ${round}: rollback did not restore the tree byte-identically`);
      }
    });
    const med = median(times);
    report(
      `rollback: usb-led run touching ${DESIGN.length} design files + 3 docs (${(bytes / 1024).toFixed(0)} KiB), ${ROUNDS} rounds`,
    );
    report(`  median ${ms(med)}, budget 100 ms  ${ratio(med / 100, { max: 1 })}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Makes one run's edits, then times its rollback (ms). */
function timedRollback(root: string): number {
  const id = newRunId();
  const journal = RunJournal.begin(root, id, runDir(root, id));
  for (const file of DESIGN)
    journal.writeFile(file, `${readFileSync(join(root, file), "utf8").replace("(generator", "(generator_edited")}\n`);
  journal.writeFile("docs/BOM.md", `${DOCS["docs/BOM.md"]}| C9 | 100n | Capacitor_SMD:C_0603_1608Metric |\n`);
  journal.writeFile("docs/CHANGELOG.md", DOCS["docs/CHANGELOG.md"]!.replace("\n\n", `\n\n## ${id}\n\n- added C9\n\n`));
  journal.writeFile(`docs/changes/${id}.md`, "# Add C9\n\nwhy: decoupling\n");
  Bun.gc(true);
  const start = performance.now();
  journal.rollback();
  return performance.now() - start;
}

/** Hash of the listed files plus the set of entries under docs/ (a leftover folder shows). */
function fingerprint(root: string, files: string[]): string {
  const hash = createHash("sha256");
  for (const file of files) hash.update(file).update(readFileSync(join(root, file)));
  const docs = [...new Bun.Glob("**").scanSync({ cwd: join(root, "docs"), onlyFiles: false })].sort();
  return hash.update(JSON.stringify(docs)).digest("hex");
}

if (import.meta.main) await benchRollback();
