/**
 * Libraries as the design names them, through the binary, on a vendor design whose symbol and
 * footprint libraries are in no table (rvpc-revb names nineteen OLIMEX libraries; its project
 * sits in HARDWARE/RVPC_Rev.B/ of its repository): `doctor` names each one with the table line
 * that adds it, and `check` reports each once, with the symbols and footprints it explains, in
 * text, GitHub annotations and SARIF, while `--json` keeps every finding kicad-cli reported.
 * `--fab` groups the footprints that do not resolve by library too.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { CheckReport, Finding } from "../../src/checks/types.ts";
import type { DoctorResult } from "../../src/commands/doctor.ts";
import { git } from "../repo/git-repo.ts";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { requireBinary, runBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

const LONG = 600_000;
const project = corpusProjects().find((p) => p.id === "corpus/rvpc-revb");
if (!project) throw new Error("corpus/rvpc-revb is missing: scripts/setup.sh --test installs the corpus");

const run = (args: string[]) => runBinary([...args, "--repo", repo], { env: ISOLATED_ENV });
let repo = "";

beforeAll(async () => {
  requireBinary();
  repo = (await copyCorpusProject(project)).root;
  await git(repo, "init", "--quiet", "--initial-branch=main");
}, LONG);

/** The library a KiCad finding says is missing, if it says one is. */
const missingIn = (f: Finding) => /does not include the (?:symbol |footprint )?library '([^']+)'/.exec(f.message)?.[1];

describe("libraries the design names", () => {
  test(
    "doctor names each missing library, the symbols and footprints naming it and the table line that adds it; check counts agree with kicad-cli's findings",
    async () => {
      const doctor = await run(["doctor", "--json"]);
      const item = (JSON.parse(doctor.stdout) as DoctorResult).items.find((i) => i.id === "libraries")!;
      expect(item.status).toBe("warn");
      const missing = item.missing!;
      expect(missing.map((m) => m.nickname)).toContain("OLIMEX_Power");
      expect(missing.filter((m) => m.kind === "symbol").length).toBe(9);
      expect(missing.filter((m) => m.kind === "footprint").length).toBe(10);
      for (const m of missing) {
        expect(m.table).toBe(`HARDWARE/RVPC_Rev.B/${m.kind === "symbol" ? "sym" : "fp"}-lib-table`);
        expect(m.line).toStartWith(`(lib (name "${m.nickname}")(type "KiCad")(uri "\${KIPRJMOD}/`);
        expect(item.fix).toContain(m.line);
      }
      // The summary names the first eight and counts the rest.
      expect(item.summary).toContain(
        'the design names 19 libraries that do not resolve: symbol library "OLIMEX_Connectors" (4 symbols), ',
      );
      expect(item.summary).toContain(", and 11 more; ");

      const text = await run(["doctor"]);
      expect(text.stdout).toContain("Preferences > Manage Symbol Libraries");
      expect(text.stdout).toContain(`create HARDWARE/RVPC_Rev.B/sym-lib-table`);
      expect(text.stdout).toContain(`(lib (name "OLIMEX_Power")(type "KiCad")`);

      // --json is kicad-cli's per-item report, untouched; its counts are doctor's.
      const report = JSON.parse((await run(["check", "--json"])).stdout) as CheckReport;
      const findings = report.checks.flatMap((c) => c.findings);
      for (const m of missing) {
        const about = findings.filter((f) => missingIn(f) === m.nickname);
        expect({
          library: m.nickname,
          symbols: about.filter((f) => f.check === "erc").length,
          footprints: about.filter((f) => f.check === "drc").length,
        }).toEqual({
          library: m.nickname,
          symbols: m.symbols,
          footprints: m.footprints,
        });
      }
      expect(findings.filter(missingIn).length).toBe(missing.reduce((n, m) => n + m.symbols + m.footprints, 0));
    },
    LONG,
  );

  test(
    "check shows each missing library once in text, GitHub annotations and SARIF",
    async () => {
      const report = JSON.parse((await run(["check", "--json"])).stdout) as CheckReport;
      const about = report.checks.flatMap((c) => c.findings).filter(missingIn);
      expect(about.length).toBe(119);
      const [text, github, sarif] = await Promise.all([
        run(["check"]),
        run(["check", "--format", "github"]),
        run(["check", "--format", "sarif"]),
      ]);

      expect(text.stdout).toContain(
        "Missing libraries (in no library table, or disabled; `copperhead doctor` says how to add them):",
      );
      expect(text.stdout).toContain("    warning  symbol library OLIMEX_Power: 17 symbols\n");
      expect(text.stdout).toContain("    warning  footprint library OLIMEX_RLC-FP: 9 symbols, 9 footprints\n");
      expect(text.stdout).toContain("    warning  footprint library OLIMEX_Signs-FP: 6 footprints\n");
      expect(text.stdout).not.toContain("does not include the");
      expect(text.stdout).toContain("    81 about missing libraries, above");
      // The verdict still counts every warning.
      expect(text.stdout.trimEnd().split("\n").at(-1)).toBe("check passed: 119 warnings");

      // GitHub shows 10 warnings of a step: nine libraries, then one line for the other ten.
      const annotations = github.stdout.trimEnd().split("\n");
      expect(annotations.filter((a) => a.includes("missing_library")).length).toBe(9);
      expect(annotations.at(-1)).toContain("10 more warnings not annotated");
      expect(annotations.some((a) => a.includes("does not include the"))).toBe(false);
      expect(annotations).toContain(
        '::warning file=HARDWARE/RVPC_Rev.B/RVPC_Rev_B.kicad_sch,title=erc/missing_library::symbol library "OLIMEX_Power" is in no library table (or is disabled): 17 symbols from it cannot be checked; `copperhead doctor` says how to add it',
      );

      const results = (
        JSON.parse(sarif.stdout) as { runs: Array<{ results: Array<{ ruleId: string; message: { text: string } }> }> }
      ).runs[0]!.results;
      expect(results.length).toBe(19);
      expect(new Set(results.map((r) => r.ruleId))).toEqual(new Set(["erc/missing_library", "drc/missing_library"]));
      expect(results.find((r) => r.message.text.startsWith('footprint library "OLIMEX_Signs-FP"'))!.ruleId).toBe(
        "drc/missing_library",
      );
    },
    LONG,
  );

  test(
    "--fab: the footprints that do not resolve are one finding per missing library, naming its parts",
    async () => {
      const report = JSON.parse((await run(["check", "--fab", "--json"])).stdout) as CheckReport;
      const unresolved = report.checks
        .find((c) => c.id === "fab")!
        .findings.filter((f) => f.rule === "footprint_unresolved");
      expect(unresolved.length).toBe(9);
      const connectors = unresolved.find((f) => f.key === "fab:footprint_unresolved:library:OLIMEX_Connectors-FP")!;
      expect(connectors.message).toStartWith("4 footprints do not resolve (PGM/DBG1, PS2_KBD1, PWR_JACK1, VGA1): ");
      expect(connectors.message).toContain('"OLIMEX_Connectors-FP"');
    },
    LONG,
  );
});
