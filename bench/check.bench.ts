/**
 * `copperhead check` against what it replaces: kicad-cli ERC then DRC with schematic parity,
 * run one after the other, as a user runs them. Whole processes on both sides, and the same
 * work on both sides: the raw runs get a fresh config home seeded with KiCad's template library
 * tables, as copperhead's do (without a symbol table kicad-cli skips the library checks, which
 * is faster but not the same check).
 *
 * On KiCad's vme-wren demo (37 sheets, a 70 MB board), copied first, four contenders run
 * interleaved, each round in this order:
 *
 * - raw kicad-cli ERC + DRC;
 * - a cold check (the repo's result cache cleared): ERC and DRC run concurrently, DRC without
 *   `--schematic-parity` (parity is native). Target ≤ 0.75×;
 * - a check after a docs-only change (a new note in `docs/`): no kicad-cli job. Target ≤ 0.05×;
 * - a check after a schematic-only change (a label renamed to a name never used before): ERC
 *   only, DRC is recalled. Target ≤ 0.15×.
 *
 * The kicad-cli jobs each check ran are read from the cache entries it added. The same runs on
 * two smaller demos show how the times grow with design size; then a `do` run on vme-wren whose
 * repair cycle fixes a schematic-only finding, per cycle against one raw DRC; last, generated
 * boards, to show how DRC itself grows.
 */
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cachedJobs } from "../src/checks/kicad-run.ts";
import { findKicadCli, type KicadCli } from "../src/kicad/cli/kicad-cli.ts";
import { generateBigBoard } from "./lib/big-board.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

const BINARY = resolve(import.meta.dir, "../dist/copperhead");
const DEMOS = process.env.COPPERHEAD_DEMOS_DIR ?? "/usr/share/kicad/demos";
const SESSIONS = resolve(import.meta.dir, "../fixtures/sessions");
/** No user or system git config: the same git on every machine. */
const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

interface Demo {
  /** Folder under the demos dir, and the project's name in it. */
  name: string;
  /** Timed rounds after the warm-up; vme-wren's raw DRC alone takes about 90 s. */
  rounds: number;
  /** The targets are set for vme-wren; on small designs fixed costs (process start, loading) dominate. */
  targets: boolean;
}

const DEMOS_BY_SIZE: Demo[] = [
  { name: "pic_programmer", rounds: 3, targets: false },
  { name: "video", rounds: 3, targets: false },
  { name: "vme-wren", rounds: 1, targets: true },
];

async function run(cmd: string[], env?: Record<string, string>): Promise<void> {
  const proc = Bun.spawn(cmd, { stdout: "ignore", stderr: "ignore", env: { ...process.env, ...env } });
  await proc.exited;
}

export async function benchCheck(): Promise<void> {
  const cli = await findKicadCli();
  const root = mkdtempSync(join(tmpdir(), "copperhead-bench-check-"));
  try {
    for (const demo of DEMOS_BY_SIZE) await benchDemo(cli, root, demo);
    await benchRepairCycle(cli, root);
    benchGeneratedBoards(cli);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** Raw ERC + DRC against a cold, a docs-only and a schematic-only check of one demo. */
async function benchDemo(cli: KicadCli, root: string, demo: Demo): Promise<void> {
  const repo = join(root, demo.name);
  cpSync(join(DEMOS, demo.name), repo, { recursive: true });
  const schematic = join(repo, `${demo.name}.kicad_sch`);
  const board = join(repo, `${demo.name}.kicad_pcb`);
  const out = join(root, "out.json");
  const label = /\(label "([^"]+)"/.exec(readFileSync(schematic, "utf8"))![1]!;
  let edits = 0;
  const ran: Record<string, string[]> = {};
  const check = async (name: string) => {
    const before = cachedJobs(repo);
    await run([BINARY, "check", "--json", "--repo", repo]);
    ran[name] = [...cachedJobs(repo)]
      .filter(([file]) => !before.has(file))
      .map(([, family]) => family)
      .sort();
  };
  const samples = await compare(
    {
      "kicad-cli erc+drc": () => rawErcDrc(cli, schematic, board, out),
      cold: async () => {
        rmSync(join(repo, ".copperhead"), { recursive: true, force: true });
        await check("cold");
      },
      "docs-only": async () => {
        mkdirSync(join(repo, "docs"), { recursive: true });
        writeFileSync(join(repo, "docs", "NOTES.md"), `# Notes\n\nRevision ${++edits}.\n`);
        await check("docs-only");
      },
      "schematic-only": async () => {
        const text = readFileSync(schematic, "utf8");
        writeFileSync(schematic, text.replace(/\(label "[^"]+"/, `(label "${label}_R${++edits}"`));
        await check("schematic-only");
      },
    },
    demo.rounds,
  );
  const base = samples["kicad-cli erc+drc"]!.median;
  const sheets = readdirSync(repo).filter((f) => f.endsWith(".kicad_sch")).length;
  report(
    `check on ${demo.name} (${sheets} sheets, ${(statSync(board).size / 1e6).toFixed(1)} MB board), ${demo.rounds} round(s) after a warm-up:`,
  );
  report(`  raw sequential kicad-cli ERC + DRC --schematic-parity ${ms(base).padStart(9)}`);
  const targets: Record<string, number> = { cold: 0.75, "docs-only": 0.05, "schematic-only": 0.15 };
  for (const [name, max] of Object.entries(targets)) {
    const time = samples[name]!.median;
    const jobs = ran[name]!.length ? ran[name]!.join("+") : "no kicad-cli job";
    report(
      `  ${`${name} check`.padEnd(21)} ${ms(time).padStart(9)}  ${ratio(time / base, demo.targets ? { max } : undefined)}  (${jobs})`,
    );
  }
}

/** kicad-cli ERC, then DRC with schematic parity, each with a freshly seeded config home. */
async function rawErcDrc(cli: KicadCli, schematic: string, board: string, out: string): Promise<void> {
  for (const args of [
    ["sch", "erc", "--format", "json", "-o", out, schematic],
    ["pcb", "drc", "--schematic-parity", "--format", "json", "-o", out, board],
  ]) {
    await rawKicad(cli, args);
  }
}

async function rawKicad(cli: KicadCli, args: string[]): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "copperhead-bench-home-"));
  mkdirSync(join(home, `${cli.version.major}.0`));
  for (const table of ["sym-lib-table", "fp-lib-table"])
    copyFileSync(join(cli.shareDir!, "template", table), join(home, `${cli.version.major}.0`, table));
  await run([cli.path, ...args], { KICAD_CONFIG_HOME: home });
  rmSync(home, { recursive: true, force: true });
}

/**
 * `copperhead do` on vme-wren with the recorded vme-wren-repair-pullup-value session: its first
 * edit writes a pull-up's value as a text variable the project does not define (a new ERC
 * error), the repair cycle writes the literal value; the board is never touched. The baseline
 * check runs on a warm cache (the user checked before asking), so every verification re-runs
 * ERC only. Each cycle's time (from `finish` to the verdict) is read from the run's transcript
 * and set against one raw DRC with schematic parity.
 */
async function benchRepairCycle(cli: KicadCli, root: string): Promise<void> {
  const repo = join(root, "do", "vme-wren");
  cpSync(join(DEMOS, "vme-wren"), repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.name", "Bench");
  git(repo, "config", "user.email", "bench@example.com");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "vme-wren demo");
  await run([BINARY, "init", "--no-hooks", "--repo", repo]);
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "copperhead init");
  await run([BINARY, "check", "--json", "--repo", repo]);

  const started = performance.now();
  const session = `replay:${join(SESSIONS, "vme-wren-repair-pullup-value.json")}`;
  const proc = Bun.spawn(
    [BINARY, "do", "change the GA0 pull-up R56 to 4.7k", "--model", session, "--yes", "--json", "--repo", repo],
    {
      stdout: "pipe",
      stderr: "ignore",
      env: { ...process.env, ...GIT_ENV },
    },
  );
  const summary = JSON.parse(await new Response(proc.stdout).text()) as { status: string; transcriptPath: string };
  await proc.exited;
  const total = performance.now() - started;
  const cycles = verificationTimes(join(repo, summary.transcriptPath));

  const drcStarted = performance.now();
  await rawKicad(cli, [
    "pcb",
    "drc",
    "--schematic-parity",
    "--format",
    "json",
    "-o",
    join(root, "out.json"),
    join(repo, "vme-wren.kicad_pcb"),
  ]);
  const drc = performance.now() - drcStarted;
  report(
    `do on vme-wren (vme-wren-repair-pullup-value, zero-latency replay, ${summary.status}), against one raw DRC ${ms(drc)}:`,
  );
  report(`  whole run ${ms(total).padStart(9)}  ${ratio(total / drc)}`);
  cycles.forEach((time, i) =>
    report(`  ${i === 0 ? "verification " : `repair cycle ${i}`} ${ms(time).padStart(9)}  ${ratio(time / drc)}`),
  );
}

/** Milliseconds from each `finish` to its verification verdict, from the run's transcript. */
function verificationTimes(transcript: string): number[] {
  const events = readFileSync(transcript, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { t: number; type: string; name?: string });
  const times: number[] = [];
  let finished: number | undefined;
  for (const event of events) {
    if (event.type === "tool_call" && event.name === "finish") finished = event.t;
    else if (event.type === "verify" && finished !== undefined) {
      times.push(event.t - finished);
      finished = undefined;
    }
  }
  return times;
}

function git(repo: string, ...args: string[]): void {
  const proc = Bun.spawnSync(["git", "-C", repo, ...args], { env: { ...process.env, ...GIT_ENV } });
  if (proc.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${proc.stderr.toString()}`);
}

/** DRC alone on generated boards of growing size: how kicad-cli's own time grows. */
function benchGeneratedBoards(cli: KicadCli): void {
  report("kicad-cli drc on generated boards (growth with size):");
  for (const tiles of [1, 16, 64, 256]) {
    const board = generateBigBoard(tiles);
    const started = performance.now();
    Bun.spawnSync([cli.path, "pcb", "drc", "--format", "json", "-o", join(board.path, "..", "drc.json"), board.path], {
      stdout: "ignore",
      stderr: "ignore",
    });
    const drc = performance.now() - started;
    report(
      `  ${String(board.footprints).padStart(5)} footprints ${(board.bytes / 1e6).toFixed(1).padStart(5)} MB  kicad-cli drc ${ms(drc).padStart(9)}  ${(drc / board.footprints).toFixed(2)} ms/footprint`,
    );
    rmSync(join(board.path, ".."), { recursive: true, force: true });
  }
}

if (import.meta.main) await benchCheck();
