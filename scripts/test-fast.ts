/**
 * The edit–test loop: `bun run test:fast` runs the test files that take seconds, not the whole
 * suite (scripts/test.sh, about three quarters of an hour on two cores).
 *
 * A file is in the loop unless it is binary-level (`test/e2e/`, which needs `bun run build`
 * first), runs over the whole corpus (`test/corpora/`), or took longer than `BUDGET_MS` in the
 * last full run (`test/timings.json`, which a full run with `bun test --update-timings` rewrites). Those are
 * the files that run KiCad over corpus boards and demos; a file with no recorded time yet is
 * new, and in. Extra arguments go to `bun test` (e.g. `-t placement` to filter by name).
 */
import { Glob } from "bun";
import timings from "../test/timings.json" with { type: "json" };

/** Longest recorded time of a file in the loop, ms. */
const BUDGET_MS = 10_000;
const SLOW_FOLDERS = ["test/e2e/", "test/corpora/"];

const recorded: Record<string, number> = timings.files;
const files: string[] = [];
for await (const file of new Glob("test/**/*.test.ts").scan(".")) {
  if (SLOW_FOLDERS.some((folder) => file.startsWith(folder))) continue;
  if ((recorded[file] ?? 0) > BUDGET_MS) continue;
  files.push(`./${file}`);
}
files.sort();

console.error(`test:fast: ${files.length} files (the full suite: bash scripts/test.sh)`);
const run = Bun.spawn(
  [
    "bun",
    "test",
    "--timeout",
    "60000",
    "--parallel=2",
    "--timings=test/timings.json",
    ...process.argv.slice(2),
    ...files,
  ],
  { stdio: ["inherit", "inherit", "inherit"] },
);
process.exit(await run.exited);
