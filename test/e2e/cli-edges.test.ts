/**
 * The command line's edges, through the binary: a mistyped command names the closest one,
 * `help` and `version` are commands, `--format github` stays within what GitHub shows, a SARIF
 * file stays a SARIF document when the check cannot run, and every flag is in `--help`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyCorpusProject, corpusProjects } from "../support/corpora.ts";
import { cleanupTempDirs, requireKicadCli } from "../support/kicad.ts";
import { ISOLATED_ENV } from "../support/repos.ts";
import { runBinary } from "./binary.ts";

afterAll(cleanupTempDirs);

const run = (args: string[], cwd?: string) => runBinary(args, { cwd, env: ISOLATED_ENV });

describe("commands", () => {
  test("a mistyped command is a usage error naming the closest one", async () => {
    const text = await run(["chek"]);
    expect(text.exitCode).toBe(3);
    expect(text.stdout).toBe("");
    expect(text.stderr).toContain("Unknown command chek");
    // consola shows `code` as code on a terminal and keeps the backticks in CI.
    expect(text.stderr).toMatch(/Did you mean `?copperhead check`?\?/);
    const sub = await run(["board", "snyc"]);
    expect(sub.stderr).toMatch(/Did you mean `?copperhead board sync`?\?/);
    const json = await run(["--json", "chek"]);
    expect(JSON.parse(json.stdout).error).toMatchObject({
      code: "usage",
      command: "chek",
      fix: "Did you mean `copperhead check`? Run `copperhead --help` for its commands.",
    });
  });

  test("help and version are commands", async () => {
    const version = await run(["version"]);
    expect(version.exitCode).toBe(0);
    expect(version.stdout).toBe((await run(["--version"])).stdout);
    const help = await run(["help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("USAGE copperhead [OPTIONS]");
    expect(help.stdout).toContain("help");
    expect(help.stdout).toContain("version");
    const board = await run(["help", "board", "sync"]);
    expect(board.exitCode).toBe(0);
    expect(board.stdout).toContain("USAGE copperhead board sync [OPTIONS]");
    expect((await run(["help", "chek"])).stderr).toMatch(/Did you mean `?copperhead check`?\?/);
  });

  test("--help lists every flag, --no-hooks with its own line; demo takes --repo", async () => {
    const init = (await run(["init", "--help"])).stdout;
    expect(init).toMatch(/--no-hooks\s+Do not install the pre-commit hook/);
    expect(init).toContain("--project");
    for (const command of ["do", "sync"]) {
      const help = (await run([command, "--help"])).stdout;
      for (const flag of ["--project", "--provider-timeout", "--model", "--repo"]) expect(help).toContain(flag);
    }
    expect((await run(["demo", "--help"])).stdout).toContain("--repo");
  });
});

describe("check formats at their edges", () => {
  let project = "";
  beforeAll(async () => {
    await requireKicadCli();
    const rvpc = corpusProjects().find((p) => p.id === "corpus/rvpc-revb")!;
    project = (await copyCorpusProject(rvpc)).root;
  });

  test("--format github annotates at most 10 of a severity, the last pointing to --baseline", async () => {
    const result = await run(["check", "--repo", project, "--format", "github"]);
    const warnings = result.stdout.split("\n").filter((line) => line.startsWith("::warning "));
    expect(warnings.length).toBe(10);
    expect(warnings.at(-1)).toMatch(
      /^::warning title=copperhead::\d+ more warnings not annotated \(GitHub shows 10 per step\): check against the base branch \(`copperhead check --baseline origin\/main`\)/,
    );
  }, 120_000);

  test("--format sarif stays a valid SARIF log when the check cannot run", async () => {
    const result = await run(["check", "--repo", "/nonexistent/board", "--format", "sarif"]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("Repository folder not found");
    const log = JSON.parse(result.stdout);
    expect(log.version).toBe("2.1.0");
    expect(log.runs[0].results).toEqual([]);
    expect(log.runs[0].tool.driver.name).toBe("copperhead");
    expect(log.runs[0].invocations).toEqual([
      {
        executionSuccessful: false,
        exitCode: 3,
        toolExecutionNotifications: [
          {
            level: "error",
            descriptor: { id: "not_found" },
            message: {
              text: "Repository folder not found: /nonexistent/board Fix: Pass --repo with the path of a folder that holds a KiCad project.",
            },
          },
        ],
      },
    ]);
  });
});
