/**
 * Findings are KiCad's, one for one, on every project of both real-world corpora: per family
 * (erc, drc, parity, routing), `copperhead check` reports as many errors and warnings as raw
 * kicad-cli does with the project's own severities and exclusions (kicad-cli leaves excluded
 * violations out of its default report). Routing is compared by count: its severity is
 * copperhead's policy (a warning until `--fab` or `--strict`). Every finding has its own key.
 *
 * Parity is compared finding for finding: copperhead's native parity check (DRC runs without
 * `--schematic-parity`) reports the keys and severities kicad-cli's schematic parity list maps to.
 *
 * Each project is copied, then checked once by copperhead and once by kicad-cli (ERC, then DRC
 * with schematic parity; raw reports are cached by content, support/kicad-cache.ts). A project
 * copperhead cannot load yet must fail with exactly the typed error listed in NOT_YET_LOADED;
 * once it loads, it is compared like any other.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import { runCheck } from "../../src/commands/check.ts";
import { indexBoard } from "../../src/checks/kicad-items.ts";
import { kicadParityFindings } from "../../src/checks/parity.ts";
import type { CheckReport, Finding } from "../../src/checks/types.ts";
import { loadDesign } from "../../src/design/design.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { CopperheadError } from "../../src/errors.ts";
import type { KicadCli, Violation } from "../../src/kicad/cli/kicad-cli.ts";
import { copyCorpusProject, everyProject, type CorpusProject } from "../support/corpora.ts";
import { cachedErc, cachedParityDrc } from "../support/kicad-cache.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";

/** Projects copperhead refuses today, and the error that refuses them. */
const NOT_YET_LOADED: Record<string, RegExp> = {
  "demos/microwave/microwave": /Root schematic not found/,
};

type Counts = { error: number; warning: number };
const FAMILIES = ["erc", "drc", "parity", "routing"] as const;
type Family = (typeof FAMILIES)[number];

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
});
afterAll(cleanupTempDirs);

function count(violations: Violation[]): Counts {
  const counts = { error: 0, warning: 0 };
  for (const v of violations)
    if (!v.excluded && (v.severity === "error" || v.severity === "warning")) counts[v.severity]++;
  return counts;
}

/**
 * copperhead's own kicad-cli results for a project are kept between runs the same way (its
 * cache is keyed by content, KiCad install and copperhead version): what this test checks is
 * how copperhead turns them into findings, and a cold machine still runs everything.
 */
const CHECK_CACHE = join(import.meta.dir, "..", "..", "node_modules", ".cache", "copperhead-corpus-check");

async function withKeptCache<T>(project: CorpusProject, copy: CorpusProject, check: () => Promise<T>): Promise<T> {
  const kept = join(CHECK_CACHE, project.id);
  const cache = join(copy.root, ".copperhead", "cache");
  if (existsSync(kept)) cpSync(kept, cache, { recursive: true });
  const result = await check();
  if (existsSync(cache)) cpSync(cache, kept, { recursive: true });
  return result;
}

/**
 * What raw kicad-cli reports for the project, per family, and its schematic parity list. The
 * reports are shared with the other corpus tests (support/kicad-cache.ts), so vme-wren's DRC runs
 * once for all of them. They ask for every severity; what kicad-cli's default report leaves out
 * (the project's exclusions) is left out here.
 */
async function kicadCounts(
  project: CorpusProject,
  timeoutMs: number,
): Promise<{ counts: Record<Family, Counts>; parity: Violation[] }> {
  const none = { error: 0, warning: 0 };
  const counts: Record<Family, Counts> = { erc: none, drc: none, parity: none, routing: none };
  let parity: Violation[] = [];
  if (project.schematic) {
    const erc = await cachedErc(cli, project.root, project.schematic, timeoutMs);
    counts.erc = count(erc.sheets.flatMap((s) => s.violations));
  }
  if (project.board) {
    const { report } = await cachedParityDrc(cli, project.root, project.board, timeoutMs);
    counts.drc = count(report.violations);
    parity = report.schematic_parity.filter((v) => !v.excluded);
    counts.parity = count(parity);
    counts.routing = count(report.unconnected_items);
  }
  return { counts, parity };
}

/** Findings as `key severity` lines, sorted: what "one for one" compares. */
function keyed(findings: Finding[]): string[] {
  return findings.map((f) => `${f.key} ${f.severity}`).sort();
}

function copperheadCounts(report: CheckReport): Record<Family, Counts> {
  const counts = {} as Record<Family, Counts>;
  for (const id of FAMILIES) {
    const findings = report.checks.find((c) => c.id === id)!.findings;
    counts[id] = {
      error: findings.filter((f) => f.severity === "error").length,
      warning: findings.filter((f) => f.severity === "warning").length,
    };
  }
  return counts;
}

describe("findings equal raw kicad-cli's, per family, on every corpus project", () => {
  for (const project of everyProject()) {
    // vme-wren's DRC takes a minute and a half on an idle machine, many more on a busy one.
    const timeoutMs = project.id.includes("vme-wren") ? 3_600_000 : 300_000;
    test(
      project.id,
      async () => {
        const copy = await copyCorpusProject(project);
        let report: CheckReport;
        try {
          report = await withKeptCache(project, copy, () => runCheck({ repo: copy.root, project: copy.projectFile }));
        } catch (err) {
          const pending = NOT_YET_LOADED[project.id];
          if (!pending || !(err instanceof CopperheadError)) throw err;
          expect(err.message).toMatch(pending);
          return;
        }
        const { counts: kicad, parity } = await kicadCounts(copy, timeoutMs);
        const ours = copperheadCounts(report);
        // Routing severity is copperhead's policy; the number of unconnected items is KiCad's.
        const total = (c: Counts) => c.error + c.warning;
        expect({ ...ours, routing: total(ours.routing) }).toEqual({ ...kicad, routing: total(kicad.routing) });
        // Parity is native (DRC runs without --schematic-parity): finding for finding, it is
        // what kicad-cli's --schematic-parity reports, keys and severities alike.
        if (copy.board) {
          const design = loadDesign(discoverProject(copy.root, copy.projectFile));
          const witness = kicadParityFindings(design, parity, indexBoard(design.board!, design.project.board!));
          expect(keyed(report.checks.find((c) => c.id === "parity")!.findings)).toEqual(keyed(witness));
        }
        const keys = report.checks.flatMap((c) => c.findings.map((f) => f.key));
        expect(keys.length - new Set(keys).size).toBe(0);
      },
      timeoutMs,
    );
  }
});
