import { afterAll, describe, expect, test } from "bun:test";
import { cp, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  closestKey,
  CONFIG_PATH,
  discoverConfiguredProject,
  loadConfig,
  parseConfigText,
} from "../../src/config/config.ts";
import { findJsonSyntaxError, MAX_JSON_DEPTH } from "../../src/config/json-syntax.ts";
import { CopperheadError } from "../../src/errors.ts";
import { cleanupTempDirs, copyFixture, FIXTURES_DIR, makeTempDir } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

/** The typed error `parseConfigText` throws for `text`. */
function configError(text: string): CopperheadError {
  try {
    parseConfigText(text);
  } catch (err) {
    if (err instanceof CopperheadError) return err;
    throw err;
  }
  throw new Error(`expected ${text} to be rejected`);
}

async function repoWithConfig(text: string): Promise<string> {
  const dir = await makeTempDir();
  await mkdir(join(dir, ".copperhead"));
  await writeFile(join(dir, CONFIG_PATH), text);
  return dir;
}

describe("loadConfig", () => {
  test("no file: defaults, no path", async () => {
    const dir = await makeTempDir();
    expect(loadConfig(dir)).toEqual({
      config: { docs: "docs", model: null, maxRepairCycles: 3, maxTurns: 40, strict: false },
    });
  });

  test("a valid file: its values over the defaults, and its repo-relative path", async () => {
    const dir = await repoWithConfig(
      JSON.stringify({
        $schema: "./config.schema.json",
        model: "anthropic:claude-sonnet-4-5",
        maxTurns: 10,
        checks: { fab: true },
      }),
    );
    expect(loadConfig(dir)).toEqual({
      config: {
        $schema: "./config.schema.json",
        docs: "docs",
        model: "anthropic:claude-sonnet-4-5",
        maxRepairCycles: 3,
        maxTurns: 10,
        strict: false,
        checks: { fab: true },
      },
      path: ".copperhead/config.json",
    });
  });

  test("errors from the file on disk name it and exit 3", async () => {
    const dir = await repoWithConfig('{ "strict": 1 }');
    let caught: unknown;
    try {
      loadConfig(dir);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CopperheadError);
    const err = caught as CopperheadError;
    expect(err.code).toBe("config_invalid");
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe(".copperhead/config.json: strict: expected true or false, got 1");
    expect(err.details.file).toBe(".copperhead/config.json");
  });
});

describe("config errors", () => {
  test("a misspelt key names the key and the closest valid key", () => {
    const err = configError('{ "maxRepairCycle": 2 }');
    expect(err.code).toBe("config_invalid");
    expect(err.message).toBe(
      '.copperhead/config.json: maxRepairCycle: unknown key "maxRepairCycle" (did you mean maxRepairCycles?)',
    );
    expect(err.details.path).toBe("maxRepairCycle");
    expect(err.fix).toBe('Rename "maxRepairCycle" to "maxRepairCycles", or remove it.');
  });

  test("a misspelt check switch is suggested from the check ids", () => {
    const err = configError('{ "checks": { "erx": false } }');
    expect(err.details.path).toBe("checks.erx");
    expect(err.message).toContain('unknown key "erx" (did you mean erc?)');
  });

  test("an unknown key with no close match lists the valid keys", () => {
    const err = configError('{ "banana": 1 }');
    expect(err.message).toContain(
      'unknown key "banana" (valid keys are $schema, project, docs, model, maxRepairCycles, maxTurns, providerTimeoutSeconds, providerDeadlineSeconds, providerRetries, contextBudgetTokens, strict, checks)',
    );
  });

  test("a wrong type says what was expected and what was found", () => {
    expect(configError('{ "strict": "yes" }').message).toBe(
      '.copperhead/config.json: strict: expected true or false, got "yes"',
    );
    expect(configError('{ "maxRepairCycles": 1.5 }').message).toBe(
      ".copperhead/config.json: maxRepairCycles: expected a whole number >= 0, got 1.5",
    );
    expect(configError('{ "maxTurns": 0 }').details.path).toBe("maxTurns");
    expect(configError("[]").message).toBe(".copperhead/config.json: (root): expected a JSON object, got []");
    expect(configError("7").message).toBe(".copperhead/config.json: (root): expected a JSON object, got 7");
  });

  test("a model without a known provider prefix is rejected; null and known prefixes pass", () => {
    const err = configError('{ "model": "gpt-4o" }');
    expect(err.details.path).toBe("model");
    expect(err.message).toContain(
      'expected null, "host", "claude-code" or "codex" (optionally ":model-id"), or "provider:model-id" with provider one of anthropic, openai, compat (replay: only with --model or COPPERHEAD_MODEL), got "gpt-4o"',
    );
    for (const bad of ["foo:bar", "host:x", "anthropic", "claude-code:"])
      expect(configError(JSON.stringify({ model: bad })).details.path).toBe("model");
    for (const model of [
      null,
      "anthropic:x",
      "openai:gpt-4o",
      "compat:llama3",
      "compat:meta-llama/Llama-3.1-8B",
      "host",
      "claude-code",
      "claude-code:opus",
      "codex",
      "codex:gpt-5-codex",
    ]) {
      expect(parseConfigText(JSON.stringify({ model })).model).toBe(model);
    }
  });

  test("the provider's patience: an idle timeout from 1 to 3600 s, a deadline to 14400 s, whole retries from 0 to 10", () => {
    expect(parseConfigText('{ "providerTimeoutSeconds": 600, "providerRetries": 0 }')).toMatchObject({
      providerTimeoutSeconds: 600,
      providerRetries: 0,
    });
    expect(parseConfigText("{}").providerTimeoutSeconds).toBeUndefined();
    expect(configError('{ "providerTimeoutSeconds": 0 }').message).toBe(
      ".copperhead/config.json: providerTimeoutSeconds: expected a number of seconds from 1 to 3600, got 0",
    );
    expect(configError('{ "providerTimeoutSeconds": 7200 }').details.path).toBe("providerTimeoutSeconds");
    expect(parseConfigText('{ "providerDeadlineSeconds": 14400 }').providerDeadlineSeconds).toBe(14400);
    expect(configError('{ "providerDeadlineSeconds": 14401 }').message).toBe(
      ".copperhead/config.json: providerDeadlineSeconds: expected a number of seconds from 1 to 14400, got 14401",
    );
    expect(configError('{ "providerRetries": 1.5 }').message).toBe(
      ".copperhead/config.json: providerRetries: expected a whole number from 0 to 10, got 1.5",
    );
    expect(configError('{ "providerRetries": 11 }').details.path).toBe("providerRetries");
  });

  test("the repo's config names a provider and a model id, never a file, URL or option", () => {
    for (const bad of [
      "replay:/dev/zero",
      "replay:../../../../etc/shadow",
      "replay:/dev/stdin",
      "replay:s.json",
      "compat:http://evil.example/v1",
      "compat:/etc/passwd",
      "codex:--dangerously-bypass",
      "anthropic:a b",
      "openai:x\u001b]0;t\u0007",
    ]) {
      expect({ bad, path: configError(JSON.stringify({ model: bad })).details.path }).toEqual({ bad, path: "model" });
    }
  });

  test("invalid JSON reports line and column", () => {
    const err = configError('{\n  "docs": "docs",\n  "strict": tru\n}\n');
    expect(err.message).toBe(
      '.copperhead/config.json is not valid JSON (line 3, column 13: expected a value but found "t")',
    );
    expect(err.details).toMatchObject({ line: 3, column: 13 });
    expect(err.fix).toContain("line 3, column 13");
  });

  test("nesting past the cap is a config error with line and column, never a stack overflow", () => {
    const err = configError("[".repeat(300_000));
    expect(err.code).toBe("config_invalid");
    expect(err.message).toBe(
      `.copperhead/config.json is not valid JSON (line 1, column ${MAX_JSON_DEPTH + 1}: nested more than ${MAX_JSON_DEPTH} levels deep)`,
    );
    // Well-formed but as deep: refused the same way, before JSON.parse or a message prints it.
    expect(configError(`{ "docs": ${"[".repeat(300_000)}${"]".repeat(300_000)} }`).details).toMatchObject({
      line: 1,
      column: 10 + MAX_JSON_DEPTH,
    });
  });

  test("a number past a double's range is out of range, not null", () => {
    const err = configError('{ "maxRepairCycles": 1e400 }');
    expect(err.message).toBe(
      ".copperhead/config.json: maxRepairCycles: expected a whole number >= 0, got a number out of range (too large to represent)",
    );
  });

  test("several problems are all reported", () => {
    const err = configError('{ "strict": "no", "maxTurn": 3 }');
    expect(err.message).toContain("has 2 problems");
    expect((err.details.issues as { path: string }[]).map((i) => i.path).sort()).toEqual(["maxTurn", "strict"]);
  });

  test("paths must stay inside the repo", () => {
    expect(configError('{ "docs": "../elsewhere" }').details.path).toBe("docs");
    expect(configError('{ "project": "/abs/board.kicad_pro" }').details.path).toBe("project");
    expect(configError('{ "project": "board.kicad_sch" }').message).toContain("expected a path ending in .kicad_pro");
  });
});

describe("findJsonSyntaxError", () => {
  test("valid JSON has no error", () => {
    expect(findJsonSyntaxError('{"a": [1, -2.5e3, true, null, "x\\u00e9"]}')).toBeUndefined();
  });

  test("locates common hand-editing mistakes", () => {
    expect(findJsonSyntaxError('{\n  "a": 1,\n}')).toEqual({ line: 3, column: 1, message: "trailing comma before }" });
    expect(findJsonSyntaxError('{ "a" 1 }')).toMatchObject({ line: 1, column: 7 });
    expect(findJsonSyntaxError('{ "a": "b }')).toMatchObject({ message: "unterminated string" });
    expect(findJsonSyntaxError("{} x")).toMatchObject({ line: 1, column: 4 });
    expect(findJsonSyntaxError("// note\n{}")).toMatchObject({ line: 1, column: 1 });
  });

  test("names what is wrong where a person would look", () => {
    expect(findJsonSyntaxError('{\n  "a": "x\ny"\n}')).toEqual({
      line: 2,
      column: 8,
      message: "line break inside a string (close the quotes, or write \\n)",
    });
    expect(findJsonSyntaxError('{ "a": 1 /* why */ }')).toEqual({
      line: 1,
      column: 10,
      message: "comments are not allowed in JSON",
    });
    expect(findJsonSyntaxError("[1, 2,]")).toEqual({ line: 1, column: 7, message: "trailing comma before ]" });
    expect(findJsonSyntaxError('{ "a": "\\q" }')).toMatchObject({
      line: 1,
      column: 8,
      message: "invalid escape in string",
    });
    expect(findJsonSyntaxError("{ 'a': 1 }")).toMatchObject({ line: 1, column: 3 });
    expect(findJsonSyntaxError("")).toEqual({ line: 1, column: 1, message: "expected a value but found end of file" });
  });
});

test("closestKey only suggests plausible typos", () => {
  const keys = ["docs", "model", "maxRepairCycles", "maxTurns", "strict"];
  expect(closestKey("Strict", keys)).toBe("strict");
  expect(closestKey("maxturn", keys)).toBe("maxTurns");
  expect(closestKey("doc", keys)).toBe("docs");
  expect(closestKey("zzzzzzzz", keys)).toBeUndefined();
});

describe("discoverConfiguredProject", () => {
  async function twoProjects(): Promise<string> {
    const repo = await copyFixture("usb-led");
    await cp(join(FIXTURES_DIR, "netlist", "kicad8"), join(repo, "other"), { recursive: true });
    return repo;
  }

  test("several projects and none configured: the top-level one, or --project when they are level", async () => {
    const repo = await twoProjects();
    expect(discoverConfiguredProject(repo).project.name).toBe("usb-led");
    await cp(join(FIXTURES_DIR, "netlist", "kicad6"), join(repo, "third"), { recursive: true });
    await rm(join(repo, "usb-led.kicad_pro"));
    expect(() => discoverConfiguredProject(repo)).toThrow(expect.objectContaining({ code: "project_ambiguous" }));
  });

  test("the config's project picks one; --project still wins", async () => {
    const repo = await twoProjects();
    await mkdir(join(repo, ".copperhead"));
    await writeFile(join(repo, CONFIG_PATH), JSON.stringify({ project: "other/kicad8.kicad_pro" }));
    expect(discoverConfiguredProject(repo).project.name).toBe("kicad8");
    expect(discoverConfiguredProject(repo, "usb-led.kicad_pro").project.name).toBe("usb-led");
  });

  test("a configured project that does not exist is a config error", async () => {
    const repo = await twoProjects();
    await mkdir(join(repo, ".copperhead"));
    await writeFile(join(repo, CONFIG_PATH), JSON.stringify({ project: "gone.kicad_pro" }));
    expect(() => discoverConfiguredProject(repo)).toThrow(expect.objectContaining({ code: "config_invalid" }));
  });
});
