/**
 * What the gated loop costs beyond the checks it has to run.
 *
 * 1. `copperhead do` with a zero-latency model (the recorded add-decoupling-cap session through
 *    `replay:`) against one cold `copperhead check` of the same repo: whole binary processes,
 *    interleaved. A run checks twice — the baseline and the verification, both cold because the
 *    repo is fresh and the edit invalidates the cache — and adds the edits, the board sync, the
 *    records and the commit. Target: ≤ 2.5× the cold check. Each round gets its own copy of an
 *    initialised usb-led repo, made before the clock starts; the cold check runs on such a copy
 *    too (no `.copperhead/cache`), so neither side pays for setup.
 * 2. Rollback of a failed run: the recorded remove-cc-pulldown session, whose change breaks
 *    REQ-BOM-1 and is rolled back after its repair cycles. Timed in-process around the real
 *    `RunJournal.rollback()` of that real run (the method is wrapped, nothing else changes), so
 *    the number is the restore itself — every touched file put back byte for byte, the created
 *    folder removed, the journal made durable — not the process or the checks around it. The
 *    transcript's `t` offsets (whole milliseconds, and they include writing the transcript line)
 *    are too coarse to be the measurement; the gap between the `rollback` event and the event
 *    before it is reported alongside as a cross-check. Target: median ≤ 100 ms.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createReplayProvider } from "../src/agent/providers/replay.ts";
import { runDo } from "../src/commands/do.ts";
import { RunJournal } from "../src/repo/journal.ts";
import { compare, median, ms, ratio, report } from "./lib/measure.ts";

const BINARY = resolve(import.meta.dir, "../dist/copperhead");
const FIXTURE = resolve(import.meta.dir, "../fixtures/usb-led");
const SESSIONS = resolve(import.meta.dir, "../fixtures/sessions");
const ROUNDS = 5;
const ROLLBACK_ROUNDS = 5;
/** No user or system git config: the same git on every machine. */
const GIT_ENV = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

export async function benchDo(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "copperhead-bench-do-"));
  try {
    const template = await initialisedRepo(join(root, "template"));
    let copies = 0;
    const freshCopy = (): string => {
      const repo = join(root, `copy-${++copies}`, "usb-led");
      cpSync(template, repo, { recursive: true });
      return repo;
    };

    // One warm-up plus ROUNDS runs per contender, each on a copy made here, off the clock.
    const doRepos = Array.from({ length: ROUNDS + 1 }, freshCopy);
    const checkRepos = Array.from({ length: ROUNDS + 1 }, freshCopy);
    const add = `replay:${join(SESSIONS, "add-decoupling-cap.json")}`;
    const samples = await compare(
      {
        "copperhead check (cold)": () => copperhead(["check", "--json", "--repo", checkRepos.shift()!], [0]),
        "copperhead do (replay)": () =>
          copperhead(
            ["do", "add a 100 nF decoupling capacitor", "--model", add, "--json", "--repo", doRepos.shift()!],
            [0],
          ),
      },
      ROUNDS,
    );
    const check = samples["copperhead check (cold)"]!.median;
    const run = samples["copperhead do (replay)"]!.median;
    report(`do on usb-led (add-decoupling-cap, zero-latency replay) vs one cold check, ${ROUNDS} rounds`);
    report(`  cold check ${ms(check).padStart(8)}`);
    report(`  do         ${ms(run).padStart(8)}  ${ratio(run / check, { max: 2.5 })}`);

    const rollback = await rollbackTimes(Array.from({ length: ROLLBACK_ROUNDS + 1 }, freshCopy));
    report(`rollback of a failed run (remove-cc-pulldown, ${rollback.files} files), ${ROLLBACK_ROUNDS} rounds`);
    report(
      `  journal.rollback() median ${ms(median(rollback.timed))}, budget 100 ms  ${ratio(median(rollback.timed) / 100, { max: 1 })}`,
    );
    report(`  transcript gap before the rollback event: median ${median(rollback.gaps)} ms (whole ms, cross-check)`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** usb-led in a git repo with `copperhead init --no-hooks` committed, and no check cache. */
async function initialisedRepo(dir: string): Promise<string> {
  const repo = join(dir, "usb-led");
  cpSync(FIXTURE, repo, { recursive: true, filter: (src) => !src.includes(".copperhead") });
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.name", "Bench");
  git(repo, "config", "user.email", "bench@example.com");
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "usb-led");
  await copperhead(["init", "--no-hooks", "--repo", repo], [0]);
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "copperhead init");
  rmSync(join(repo, ".copperhead/cache"), { recursive: true, force: true });
  return repo;
}

/**
 * Runs the remove-cc-pulldown session in each repo (the first one warms up) and returns the
 * time of each real `rollback()` and each transcript gap.
 */
async function rollbackTimes(repos: string[]): Promise<{ timed: number[]; gaps: number[]; files: number }> {
  const timed: number[] = [];
  const gaps: number[] = [];
  let files = 0;
  const original = RunJournal.prototype.rollback;
  let last = 0;
  RunJournal.prototype.rollback = function (this: RunJournal) {
    const start = performance.now();
    try {
      return original.call(this);
    } finally {
      last = performance.now() - start;
    }
  };
  try {
    for (const [round, repo] of repos.entries()) {
      last = Number.NaN;
      Bun.gc(true);
      const summary = await runDo({
        request: "remove the CC2 pull-down resistor R2",
        repo,
        provider: createReplayProvider(join(SESSIONS, "remove-cc-pulldown.json")),
      });
      if (summary.status !== "rolled_back" || Number.isNaN(last))
        throw new Error(`round ${round}: expected a rollback, got ${summary.status}/${summary.reason}`);
      if (git(repo, "status", "--porcelain") !== "")
        throw new Error(`round ${round}: the rollback left the tree dirty`);
      if (round === 0) continue;
      timed.push(last);
      files = summary.filesTouched.length;
      const lines = readFileSync(join(repo, summary.transcriptPath), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { type: string; t: number });
      const at = lines.findIndex((l) => l.type === "rollback");
      gaps.push(lines[at]!.t - lines[at - 1]!.t);
    }
  } finally {
    RunJournal.prototype.rollback = original;
  }
  return { timed, gaps, files };
}

async function copperhead(args: string[], okExits: number[]): Promise<void> {
  const proc = Bun.spawn([BINARY, ...args], { stdout: "ignore", stderr: "pipe", env: { ...process.env, ...GIT_ENV } });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (!okExits.includes(code)) throw new Error(`copperhead ${args[0]} exited ${code}: ${stderr}`);
}

function git(repo: string, ...args: string[]): string {
  const result = Bun.spawnSync(["git", "-C", repo, ...args], { env: { ...process.env, ...GIT_ENV } });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout.toString();
}

if (import.meta.main) await benchDo();
