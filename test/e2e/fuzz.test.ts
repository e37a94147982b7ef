/**
 * Mutation fuzzing of the design files through the compiled binary: truncations, unbalanced
 * parentheses, NUL and invalid UTF-8 bytes, deep nesting, terminal escapes and bidi characters
 * in strings, and a folder, a FIFO or a symlink in a file's place, applied to the usb-led
 * fixture's schematics, board and project file; and a SPEC.md of long whitespace runs, escape
 * sequences, bidi characters and many-star globs. Each mutant goes through `netlist`, `sync`
 * and `check`, and each run must end with exit 0–3 — and, when it fails, with a typed error
 * (never `internal_error`) that names the mutated file — within 60 s and 1 GB, printing no raw
 * escape or bidi character.
 *
 * A second test fuzzes what else a repo carries: the check cache in place of a folder (a symlink
 * out, to a device, dangling, a FIFO or file; entries that are links or FIFOs), footprint names
 * with separators, `..` and control characters (through `board sync`), and config `model`
 * values that name files, URLs, options or devices (through `do`). Each ends typed and
 * bounded, never writes outside the repo, and the refusals carry the code they should.
 *
 * Cheap by construction: most mutants fail in copperhead's own parser, before kicad-cli; the
 * few that parse are the only ones `check` hands to kicad-cli, and they are capped
 * (`KICAD_MUTANTS_PER_FILE`), so the whole file stays within the CI budget. The offsets are drawn from a
 * seeded generator, so a failure reproduces.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { treeFingerprint } from "../repo/git-repo.ts";
import { cleanupTempDirs, copyFixture, makeTempDir } from "../support/kicad.ts";
import { copyRepo, ISOLATED_ENV } from "../support/repos.ts";
import { editFile } from "../support/variants.ts";
import { requireBinary, runBinaryBounded, templateRepo, type BoundedResult } from "./binary.ts";
import { seededRandom } from "../support/seeded-random.ts";

afterAll(cleanupTempDirs);

const LIMITS = { timeoutMs: 60_000, maxRssBytes: 1024 * 1024 * 1024 };
const FILES = ["usb-led.kicad_sch", "regulator.kicad_sch", "usb-led.kicad_pcb", "usb-led.kicad_pro"] as const;
/** The fixture's files, and a SPEC.md it does not have (its mutants write one). */
type FixtureFile = (typeof FILES)[number] | "docs/SPEC.md";

/** Text a terminal acts on instead of printing: ESC, CSI, OSC, bidi controls and zero-width characters. */
const HOSTILE_TEXT = "\u001b]0;title\u0007\u001b[2J\u001b]52;c;eA==\u0007\u009b31m\u202eR1\u2066\u200b";
/** What no output may hold raw (JSON escapes C0 itself; the rest is copperhead's to escape). */
const ACTIVE = /[\u001b\u009b\u009d\u202a-\u202e\u2066-\u2069\u200b-\u200f]/;
/** Long enough that a pattern quadratic in a whitespace run takes minutes (26 s at 200k). */
const RUN = 300_000;
/**
 * Mutants of a KiCad S-expression file that copperhead can still read reach kicad-cli in
 * `check`; at most this many per file are checked (a project file kicad-cli is never handed
 * unless it is JSON, so its mutants are all checked).
 */
const KICAD_MUTANTS_PER_FILE = 3;

interface Mutant {
  name: string;
  file: FixtureFile;
  /** Rewrites the file's bytes; or `replace` puts something else in its place. */
  bytes?: (original: Buffer) => Buffer;
  replace?: (abs: string, outside: string) => void;
}

const insertAt = (b: Buffer, at: number, what: Buffer | string) =>
  Buffer.concat([b.subarray(0, at), Buffer.from(what as string), b.subarray(at)]);
const deleteAt = (b: Buffer, at: number, n = 1) => Buffer.concat([b.subarray(0, at), b.subarray(at + n)]);
/** The offset of the `nth` occurrence of `byte` at or after a fraction of the file. */
const nearest = (b: Buffer, fraction: number, byte: string) => {
  const at = b.indexOf(byte, Math.floor(b.length * fraction));
  return at < 0 ? b.lastIndexOf(byte) : at;
};

function mutants(): Mutant[] {
  const rand = seededRandom(0xc0ffee);
  const list: Mutant[] = [];
  const sexprFiles = FILES.filter((f) => f !== "usb-led.kicad_pro");
  for (const file of sexprFiles) {
    // The most hostile first: the first of the mutants that parse are the ones check runs.
    list.push({
      name: "nested 100,000 lists deep",
      file,
      bytes: (b) => insertAt(b, nearest(b, 0.5, "("), `${"(".repeat(100_000)}${")".repeat(100_000)}`),
    });
    list.push({
      name: "nested 100,000 lists deep, never closed",
      file,
      bytes: (b) => insertAt(b, nearest(b, 0.5, "("), "(".repeat(100_000)),
    });
    list.push({
      name: "invalid UTF-8 between tokens",
      file,
      bytes: (b) => insertAt(b, nearest(b, 0.3, "("), Buffer.from([0xc0, 0x80, 0xff])),
    });
    list.push({
      name: "invalid UTF-8 inside a string",
      file,
      bytes: (b) => insertAt(b, b.indexOf('"', b.indexOf("(property")) + 1, Buffer.from([0xff, 0xfe, 0xc3])),
    });
    const f3 = rand();
    list.push({
      name: `NUL bytes at ${(f3 * 100).toFixed(0)}%`,
      file,
      bytes: (b) => insertAt(b, Math.floor(b.length * f3), Buffer.from([0, 0, 0])),
    });
    for (const fraction of [0, 0.001, 0.5, 0.999, rand()]) {
      list.push({
        name: `truncated to ${(fraction * 100).toFixed(1)}%`,
        file,
        bytes: (b) => b.subarray(0, Math.floor(b.length * fraction)),
      });
    }
    const f1 = rand();
    list.push({
      name: `an extra "(" at ${(f1 * 100).toFixed(0)}%`,
      file,
      bytes: (b) => insertAt(b, nearest(b, f1, "("), "("),
    });
    const f2 = rand();
    list.push({
      name: `a ")" removed at ${(f2 * 100).toFixed(0)}%`,
      file,
      bytes: (b) => deleteAt(b, nearest(b, f2, ")")),
    });
    list.push({ name: 'an extra ")" in the middle', file, bytes: (b) => insertAt(b, nearest(b, 0.5, ")"), ")") });
    list.push({
      name: "escape sequences and bidi characters in a string",
      file,
      bytes: (b) => insertAt(b, b.indexOf('"', b.indexOf("(property")) + 1, HOSTILE_TEXT),
    });
  }
  const spec = (name: string, lines: string[]): Mutant => ({
    name,
    file: "docs/SPEC.md",
    bytes: () => Buffer.from(["# Spec", "", "## Requirements", ...lines, ""].join("\n")),
  });
  list.push(
    spec("long whitespace runs", [
      `- REQ-WS-1:${"\t".repeat(RUN)}padded\r`,
      `  - check:${" ".repeat(RUN)}net VBUS exists${" ".repeat(RUN)}\r`,
      `- ${"\t".repeat(RUN)}\r`,
      `### Notes${" ".repeat(RUN)}x`,
      `## Other${" ".repeat(RUN)}#\r`,
      `Some \`net\`${" ".repeat(RUN)}and ${"`".repeat(RUN)}`,
    ]),
    spec("escape sequences and bidi characters", [
      `- REQ-ESC-1: ${HOSTILE_TEXT}`,
      `  - check: net ${HOSTILE_TEXT} exists`,
      `  - check: R1.value == "${HOSTILE_TEXT}"`,
      `\`${HOSTILE_TEXT}\``,
    ]),
    spec("many-star globs", [
      `- REQ-GLOB-1: globs`,
      `  - check: count ${"*R".repeat(40)}x == 0`,
      `  - check: count ${"?*".repeat(40)} >= 0`,
      `  - check: count ${"*:".repeat(40)}* >= 0`,
    ]),
  );
  for (const file of FILES) {
    list.push({ name: "a folder in its place", file, replace: (abs) => mkdirSync(abs) });
    list.push({ name: "a FIFO in its place", file, replace: (abs) => void Bun.spawnSync(["mkfifo", abs]) });
    list.push({ name: "a symlink to /dev/zero in its place", file, replace: (abs) => symlinkSync("/dev/zero", abs) });
    list.push({ name: "a symlink loop in its place", file, replace: (abs) => symlinkSync(basename(abs), abs) });
    list.push({
      name: "a symlink to an outside copy in its place",
      file,
      replace: (abs, outside) => symlinkSync(outside, abs),
    });
  }
  list.push({ name: "not JSON", file: "usb-led.kicad_pro", bytes: (b) => b.subarray(0, Math.floor(b.length / 2)) });
  list.push({ name: "NUL bytes", file: "usb-led.kicad_pro", bytes: (b) => insertAt(b, 1, Buffer.from([0, 0])) });
  return list;
}

/** What is wrong with how a run ended, if anything: exit 0–3, and a typed error naming the file. */
function badEnd(file: string, run: BoundedResult): string | undefined {
  if (run.timedOut) return "ran past 60 s";
  if (run.outOfMemory) return "grew past 1 GB";
  if (run.exitCode < 0 || run.exitCode > 3)
    return `exit ${run.exitCode}: ${run.stderr.trim().split("\n").slice(-3).join(" / ")}`;
  const active = ACTIVE.exec(run.stdout + run.stderr);
  if (active) return `printed a raw U+${active[0].charCodeAt(0).toString(16).padStart(4, "0")}`;
  if (run.exitCode !== 3) return undefined;
  let error: { code: string; message: string; file?: string; fix?: string };
  try {
    error = JSON.parse(run.stdout).error;
  } catch {
    return `exit 3 without a typed error on stdout: ${run.stdout.slice(0, 200)}`;
  }
  if (error.code === "internal_error") return `internal_error: ${error.message}`;
  if (!`${error.message} ${error.file ?? ""}`.includes(basename(file)))
    return `${error.code} does not name ${file}: ${error.message}`;
  if (typeof error.fix !== "string") return `${error.code} has no fix: ${error.message}`;
  return undefined;
}

describe("fuzzed design files", () => {
  const all = mutants();

  test(`${all.length} mutants through netlist, sync and check: exit 0–3, typed errors naming the file, bounded`, async () => {
    requireBinary();
    expect(all.length).toBeGreaterThanOrEqual(50);
    const outside = join(await makeTempDir(), "outside");
    mkdirSync(outside);
    const reachedKicad = new Map<string, number>();
    const problems: string[] = [];
    const skippedCheck: string[] = [];
    for (const mutant of all) {
      const repo = await copyFixture("usb-led");
      const abs = join(repo, mutant.file);
      mkdirSync(dirname(abs), { recursive: true });
      const original = existsSync(abs) ? readFileSync(abs) : Buffer.alloc(0);
      if (mutant.bytes) writeFileSync(abs, mutant.bytes(original));
      else {
        const copy = join(outside, `${basename(repo)}-${mutant.file}`);
        writeFileSync(copy, original);
        rmSync(abs);
        mutant.replace!(abs, copy);
      }
      const label = `${mutant.file}: ${mutant.name}`;
      let parses = true;
      for (const command of ["netlist", "sync", "check"]) {
        // Only mutants copperhead itself could read reach kicad-cli in check; those are capped.
        const toKicad = command === "check" && parses && mutant.file !== "usb-led.kicad_pro";
        if (
          toKicad &&
          reachedKicad.set(mutant.file, (reachedKicad.get(mutant.file) ?? 0) + 1).get(mutant.file)! >
            KICAD_MUTANTS_PER_FILE
        ) {
          skippedCheck.push(label);
          continue;
        }
        const run = await runBinaryBounded([command, "--repo", repo, "--json"], {
          env: ISOLATED_ENV,
          stdin: "pipe",
          ...LIMITS,
        });
        const bad = badEnd(mutant.file, run);
        if (bad) problems.push(`${label} (${command}): ${bad}`);
        if (command !== "check" && run.exitCode === 3) parses = false;
      }
      rmSync(repo, { recursive: true, force: true });
    }
    expect(problems).toEqual([]);
    // The cap is what keeps this test fast; say how much it left out.
    if (skippedCheck.length > 0)
      console.log(
        `check skipped for ${skippedCheck.length} mutants copperhead could parse (netlist and sync ran): ${skippedCheck.join("; ")}`,
      );
  }, 900_000);
});

/** usb-led with `init` committed, for the repo inputs below. */
const template = templateRepo();

interface RepoInput {
  name: string;
  /** Puts the input in place; `outside` is a folder outside the repo that must stay as it is. */
  setup: (repo: string, outside: string) => void;
  command: string[];
  /** The error code the run must end with; undefined: exit 0 (or any typed ending). */
  code?: string;
}

const fifo = (abs: string) => void Bun.spawnSync(["mkfifo", abs]);
const replaceCache = (repo: string, put: (abs: string) => void) => {
  rmSync(join(repo, ".copperhead/cache"), { recursive: true, force: true });
  put(join(repo, ".copperhead/cache"));
};
const setFootprint = (repo: string, footprint: string) =>
  editFile(join(repo, "regulator.kicad_sch"), (t) =>
    t.replace(
      '(property "Footprint" "Capacitor_SMD:C_0603_1608Metric"',
      `(property "Footprint" ${JSON.stringify(footprint)}`,
    ),
  );
const setModel = (repo: string, model: unknown) =>
  editFile(join(repo, ".copperhead/config.json"), (t) => JSON.stringify({ ...JSON.parse(t), model }));

function repoInputs(): RepoInput[] {
  const check = ["check"];
  const cache: RepoInput[] = [
    {
      name: "cache: a symlink to an outside folder",
      setup: (repo, outside) => replaceCache(repo, (abs) => symlinkSync(outside, abs)),
      command: check,
      code: "bad_path",
    },
    {
      name: "cache: a symlink to /dev/zero",
      setup: (repo) => replaceCache(repo, (abs) => symlinkSync("/dev/zero", abs)),
      command: check,
      code: "bad_path",
    },
    {
      name: "cache: a dangling symlink",
      setup: (repo, outside) => replaceCache(repo, (abs) => symlinkSync(join(outside, "nothing"), abs)),
      command: check,
      code: "bad_path",
    },
    { name: "cache: a FIFO", setup: (repo) => replaceCache(repo, fifo), command: check, code: "bad_path" },
    {
      name: "cache: a file",
      setup: (repo) => replaceCache(repo, (abs) => writeFileSync(abs, "x")),
      command: check,
      code: "bad_path",
    },
    {
      name: "cache: .copperhead a symlink to an outside folder",
      setup: (repo, outside) => {
        rmSync(join(repo, ".copperhead"), { recursive: true });
        symlinkSync(outside, join(repo, ".copperhead"));
      },
      command: check,
      code: "bad_path",
    },
    {
      // Every name the cache could use for its files, planted as links, FIFOs and garbage: all misses.
      name: "cache: entries, temp files and .gitignore as links, FIFOs and garbage",
      setup: (repo, outside) =>
        replaceCache(repo, (abs) => {
          mkdirSync(abs);
          symlinkSync(join(outside, "gitignore"), join(abs, ".gitignore"));
          for (const name of readdirNames(join(template(), ".copperhead/cache"))) {
            if (!name.endsWith(".json")) continue;
            symlinkSync(join(outside, name), join(abs, name));
            fifo(join(abs, `.${name}.copperhead-tmp`));
          }
        }),
      command: check,
    },
  ];
  const names = [
    "../../../../../../etc/x",
    "..",
    ".",
    "a/b",
    "a\\b",
    "x\u0000y",
    "x\u001b]0;t\u0007",
    "/abs",
    "..\\..\\x",
    "C_0603..x",
  ];
  const footprints: RepoInput[] = [...names.map((name) => `Capacitor_SMD:${name}`), ":x", "Capacitor_SMD:"].map(
    (footprint) => ({
      name: `footprint ${JSON.stringify(footprint)}`,
      setup: (repo: string) => setFootprint(repo, footprint),
      command: ["board", "sync"],
      code: "footprint_not_found",
    }),
  );
  // A nickname is looked up in the lib tables, never joined to a path: no library, whatever it spells.
  footprints.push({
    name: "footprint library ../Capacitor_SMD",
    setup: (repo) => setFootprint(repo, "../Capacitor_SMD:C_0603_1608Metric"),
    command: ["board", "sync"],
  });
  const models: unknown[] = [
    "replay:/dev/zero",
    "replay:/dev/stdin",
    "replay:../../../../etc/passwd",
    "replay:fixtures/sessions/add-decoupling-cap.json",
    "compat:http://127.0.0.1:1/v1",
    "compat:/etc/passwd",
    "codex:--dangerously-bypass-approvals-and-sandbox",
    "claude-code:$(touch /tmp/pwned)",
    "anthropic:a b",
    `anthropic:${"x".repeat(100_000)}`,
    "openai:\u001b]52;c;cHduZWQ=\u0007",
    "host:x",
    5,
    { provider: "replay" },
    ["replay:/dev/zero"],
  ];
  const configs: RepoInput[] = models.map((model) => ({
    name: `config model ${JSON.stringify(model).slice(0, 60)}`,
    setup: (repo: string) => setModel(repo, model),
    command: ["do", "add a test point"],
    code: "config_invalid",
  }));
  return [...cache, ...footprints, ...configs];
}

function readdirNames(dir: string): string[] {
  return Bun.spawnSync(["ls", "-A", dir]).stdout.toString().split("\n").filter(Boolean);
}

describe("fuzzed repo inputs", () => {
  test("a linked or misplaced cache, footprint names that are paths, config models that name files: typed, bounded, nothing written outside", async () => {
    const inputs = repoInputs();
    const problems: string[] = [];
    for (const input of inputs) {
      const repo = await copyRepo(template());
      const outside = await makeTempDir();
      input.setup(repo, outside);
      const board = readFileSync(join(repo, "usb-led.kicad_pcb"));
      const run = await runBinaryBounded([...input.command, "--repo", repo, "--json"], {
        env: ISOLATED_ENV,
        stdin: "pipe",
        ...LIMITS,
      });
      const code = run.exitCode === 3 ? (JSON.parse(run.stdout || "{}").error?.code as string | undefined) : undefined;
      if (run.timedOut || run.outOfMemory)
        problems.push(`${input.name}: ${run.timedOut ? "ran past 60 s" : "grew past 1 GB"}`);
      else if (run.exitCode < 0 || run.exitCode > 3) problems.push(`${input.name}: exit ${run.exitCode}`);
      else if (run.exitCode === 3 && (code === undefined || code === "internal_error"))
        problems.push(`${input.name}: ${run.stdout.slice(0, 300)}`);
      else if (input.code !== undefined && code !== input.code)
        problems.push(`${input.name}: expected ${input.code}, got exit ${run.exitCode} ${code ?? ""}`);
      if (Object.keys(treeFingerprint(outside, [])).length > 0) problems.push(`${input.name}: wrote outside the repo`);
      if (input.code !== undefined && !readFileSync(join(repo, "usb-led.kicad_pcb")).equals(board))
        problems.push(`${input.name}: changed the board`);
      rmSync(repo, { recursive: true, force: true });
    }
    expect(problems).toEqual([]);
  }, 600_000);
});
