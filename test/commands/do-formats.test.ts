/**
 * `copperhead do` on projects last saved by KiCad 6 and KiCad 7 (from the open-hardware corpus):
 * a scripted model adds a part and syncs the board; the run commits, every design file keeps its
 * `(version …)`, and kicad-cli loads the committed design with no finding that was not there
 * before (the run's own gate checks that; it is checked again here, from scratch).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { createReplayProvider } from "../../src/agent/providers/replay.ts";
import { runDo } from "../../src/commands/do.ts";
import { runInit } from "../../src/commands/init.ts";
import { exportNetlist, runDrc, runErc, type Violation } from "../../src/kicad/cli/kicad-cli.ts";
import { parseKicadNetlist } from "../../src/kicad/netlist/kicad-netlist.ts";
import { buildNetlist } from "../../src/kicad/netlist/netlist.ts";
import { loadSchematicProject } from "../../src/kicad/schematic/model/hierarchy.ts";
import { childText, parseSexpr } from "../../src/kicad/sexpr/index.ts";
import { git } from "../repo/git-repo.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, FIXTURES_DIR, requireKicadCli } from "../support/kicad.ts";
import { netlistDiff } from "../support/netlist.ts";

afterAll(cleanupTempDirs);

interface Case {
  project: string;
  format: string;
  session: string;
  request: string;
  /** The new part and the nets its pins must end up on. */
  part: string;
  pins: Record<string, string>;
}

const CASES: Case[] = [
  {
    project: "corpus/rp2040-designguide",
    format: "KiCad 6 (schematic 20211123, board 20211014)",
    session: "kicad6-add-decoupling-cap",
    request: "Add a 100 nF decoupling capacitor on +3V3",
    part: "C99",
    pins: { "1": "+3V3", "2": "GND" },
  },
  {
    project: "corpus/antenna-eval",
    format: "KiCad 7 (schematic 20230121, board 20221018)",
    session: "kicad7-add-test-point",
    request: "Add a GND test point",
    part: "TP99",
    pins: { "1": "GND" },
  },
];

/** `(version …)` of every schematic and board of the repo, by repo-relative path. */
function versions(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const file of new Bun.Glob("**/*.{kicad_sch,kicad_pcb}").scanSync({ cwd: repo, dot: false })) {
    out[file] = childText(parseSexpr(readFileSync(join(repo, file))).root, "version") ?? "";
  }
  return out;
}

/**
 * Violations by type and severity. A library symbol differing from its library counts once,
 * whatever the number of placed symbols using it: a new power symbol reuses the design's
 * embedded one, which differs as the design's others of its name do (checks/baseline.ts).
 */
function counts(violations: Violation[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of violations) {
    if (v.excluded) continue;
    if (v.type === "lib_symbol_mismatch") out[`${v.type}/${v.severity}: ${v.description}`] = 1;
    else out[`${v.type}/${v.severity}`] = (out[`${v.type}/${v.severity}`] ?? 0) + 1;
  }
  return out;
}

/**
 * Raw kicad-cli ERC and DRC finding counts by type and severity. The new part's pads are not
 * routed yet (the run reports them as layout pending), so their unconnected items do not count.
 */
async function findings(schematic: string, board: string, part: string): Promise<Record<string, number>> {
  const erc = await runErc(schematic);
  const { report } = await runDrc(board, { schematicParity: true });
  const unrouted = report.unconnected_items.filter((v) => !v.items.some((i) => i.description.includes(`of ${part}`)));
  return {
    ...counts(erc.sheets.flatMap((s) => s.violations)),
    ...counts(
      [...report.violations, ...unrouted, ...report.schematic_parity].map((v) => ({ ...v, type: `drc:${v.type}` })),
    ),
  };
}

describe("do on older formats", () => {
  for (const c of CASES) {
    test(`${c.project}, ${c.format}: a part is added and committed, formats kept, kicad-cli finds nothing new`, async () => {
      await requireKicadCli();
      const copy = await copyCorpusProject(corpusProjects().find((p) => p.id === c.project)!);
      const repo = copy.root;
      await git(repo, "init", "--quiet", "--initial-branch=main");
      await git(repo, "config", "user.name", "Test User");
      await git(repo, "config", "user.email", "test@example.com");
      await git(repo, "add", "-A");
      await git(repo, "commit", "--quiet", "-m", "design");
      await runInit({ repo, hooks: false });
      await git(repo, "add", "-A");
      await git(repo, "commit", "--quiet", "-m", "copperhead init");
      const before = versions(repo);
      const baseline = await findings(copy.schematic!, copy.board!, c.part);

      const summary = await runDo({
        request: c.request,
        repo,
        provider: createReplayProvider(join(FIXTURES_DIR, "sessions", `${c.session}.json`)),
      });
      expect({ status: summary.status, reason: summary.reason }).toEqual({ status: "committed", reason: undefined });
      expect(summary.verification.newFindings).toEqual([]);
      expect(summary.filesTouched).toContain(relative(repo, copy.schematic!));
      expect(summary.filesTouched).toContain(relative(repo, copy.board!));
      expect((await git(repo, "status", "--porcelain")).trim()).toBe("");

      expect(versions(repo)).toEqual(before);
      const netlist = parseKicadNetlist(await exportNetlist(copy.schematic!), copy.schematic);
      expect(netlistDiff(netlist, buildNetlist(loadSchematicProject(copy.schematic!)))).toEqual([]);
      for (const [pin, net] of Object.entries(c.pins)) {
        expect(netlist.nets.find((n) => n.nodes.some((x) => x.ref === c.part && x.pin === pin))?.name).toBe(net);
      }
      const after = await findings(copy.schematic!, copy.board!, c.part);
      for (const [kind, n] of Object.entries(after))
        expect({ kind, n }).toEqual({ kind, n: Math.min(n, baseline[kind] ?? 0) });
    }, 600_000);
  }
});
