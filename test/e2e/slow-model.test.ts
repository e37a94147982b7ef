/**
 * Patience with a slow model, through the compiled binary and a loopback model server that
 * streams: a first answer that takes 200 s in all, an event every few seconds (a local model on
 * a CPU), completes a committed run with the default idle timeout; a stream that stalls longer
 * than the idle timeout ends the run `provider_error` with the reason, byte-identical; so does a
 * stream kept alive with keep-alives past the call's total deadline. A server that does not
 * answer at all is named by its URL, and the run says nothing was started; with a key and no
 * --model, the model is the one the provider's own list offers.
 *
 * The 200 s run is the one slow test the acceptance asks for; the stall uses a short timeout.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_PROVIDER_TIMEOUT_SECONDS } from "../../src/config/schema.ts";
import { LOCK_PATH } from "../../src/repo/lock.ts";
import { DEFAULT_ANTHROPIC_MODEL } from "../../src/agent/providers/index.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";
import { copyRepo, fingerprint, ISOLATED_ENV } from "../support/repos.ts";
import { runBinary, templateRepo } from "./binary.ts";
import { serveScriptedMessagesApi, serveScriptedModel, sessionTurns } from "./scripted-model.ts";

afterAll(cleanupTempDirs);

const template = templateRepo();
const REQUEST = "add a 100 nF decoupling capacitor on the LDO output";
/** add-decoupling-cap's turns up to and including `sync_board` (see do.test.ts). */
const EDIT_TURNS = 5;

describe("a slow model", () => {
  test("a first answer streamed over 200 s commits with the default idle timeout", async () => {
    const repo = await copyRepo(template());
    const model = serveScriptedModel(sessionTurns("add-decoupling-cap"), {
      pacing: (n) => (n === 1 ? { totalMs: 200_000 } : undefined),
    });
    try {
      const started = Date.now();
      const result = await runBinary(["do", REQUEST, "--model", "compat:test", "--repo", repo, "--json"], {
        env: { ...ISOLATED_ENV, COPPERHEAD_BASE_URL: model.baseUrl },
      });
      const summary = JSON.parse(result.stdout);
      expect({ exitCode: result.exitCode, status: summary.status }).toEqual({ exitCode: 0, status: "committed" });
      // The first answer alone took longer than the idle timeout: only its pace kept it alive.
      expect(Date.now() - started).toBeGreaterThan(DEFAULT_PROVIDER_TIMEOUT_SECONDS * 1000);
    } finally {
      await model.stop();
    }
  }, 420_000);

  test("a stream stalled mid-edit past the idle timeout: provider_error with the reason, byte-identical", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    const turns = sessionTurns("add-decoupling-cap").slice(0, EDIT_TURNS + 1);
    const model = serveScriptedModel(turns, { pacing: (n) => (n === EDIT_TURNS + 1 ? { stallAfter: 2 } : undefined) });
    try {
      const result = await runBinary(["do", REQUEST, "--model", "compat:test", "--repo", repo, "--json"], {
        // A deadline well past the four attempts and their backoff, so the idle timeout is what ends them.
        env: {
          ...ISOLATED_ENV,
          COPPERHEAD_BASE_URL: model.baseUrl,
          COPPERHEAD_PROVIDER_TIMEOUT: "2",
          COPPERHEAD_PROVIDER_DEADLINE: "60",
        },
      });
      const summary = JSON.parse(result.stdout);
      expect(result.exitCode).toBe(1);
      expect(summary.status).toBe("rolled_back");
      expect(summary.reason).toBe("provider_error");
      expect(summary.detail).toContain("the server sent nothing for 2 s (gave up after 4 attempts)");
      expect(fingerprint(repo)).toEqual(before);
    } finally {
      await model.stop();
    }
  }, 180_000);

  test("a stream kept alive mid-edit with a keep-alive every 0.5 s ends at the total deadline: provider_error, byte-identical, the lock released", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    const turns = sessionTurns("add-decoupling-cap").slice(0, EDIT_TURNS + 1);
    const model = serveScriptedModel(turns, {
      pacing: (n) => (n === EDIT_TURNS + 1 ? { stallAfter: 2, keepAliveMs: 500 } : undefined),
    });
    try {
      const started = Date.now();
      const result = await runBinary(
        [
          "do",
          REQUEST,
          "--model",
          "compat:test",
          "--provider-timeout",
          "3",
          "--provider-deadline",
          "8",
          "--repo",
          repo,
          "--json",
        ],
        {
          env: { ...ISOLATED_ENV, COPPERHEAD_BASE_URL: model.baseUrl },
        },
      );
      const summary = JSON.parse(result.stdout);
      expect({ exitCode: result.exitCode, status: summary.status, reason: summary.reason }).toEqual({
        exitCode: 1,
        status: "rolled_back",
        reason: "provider_error",
      });
      expect(summary.detail).toContain("the model call ran past its deadline of 8 s without a complete answer");
      // One attempt: a deadline is not retried.
      expect(model.requests).toBe(EDIT_TURNS + 1);
      expect(fingerprint(repo)).toEqual(before);
      expect(existsSync(join(repo, LOCK_PATH))).toBe(false);
      // It used to wait forever (still waiting after 70 s with --provider-timeout 3).
      expect(Date.now() - started).toBeLessThan(120_000);
    } finally {
      await model.stop();
    }
  }, 240_000);

  test("an unreachable server: provider_error naming its URL, and the run says nothing was started", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    const url = "http://127.0.0.1:9/v1";
    const result = await runBinary(["do", REQUEST, "--model", "compat:test", "--repo", repo], {
      env: {
        ...ISOLATED_ENV,
        COPPERHEAD_BASE_URL: url,
        COPPERHEAD_PROVIDER_TIMEOUT: "1",
        COPPERHEAD_PROVIDER_DEADLINE: "60",
      },
    });
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toStartWith(
      "copperhead do: the model provider failed before any edit, so nothing was started and nothing was changed: ",
    );
    expect(result.stdout).toContain(`network error reaching ${url}/chat/completions`);
    expect(result.stderr).toContain(
      "ended before any edit (provider_error): nothing was started, nothing to roll back",
    );
    expect(result.stderr).not.toContain("rolled back");
    expect(fingerprint(repo)).toEqual(before);
  }, 120_000);

  test("a malformed timeout is a usage error naming its source, before anything starts", async () => {
    const repo = await copyRepo(template());
    const before = fingerprint(repo);
    const flag = await runBinary(
      ["do", REQUEST, "--model", "compat:test", "--provider-timeout", "soon", "--repo", repo, "--json"],
      {
        env: { ...ISOLATED_ENV, COPPERHEAD_BASE_URL: "http://127.0.0.1:9/v1" },
      },
    );
    expect(flag.exitCode).toBe(3);
    expect(JSON.parse(flag.stdout).error).toMatchObject({
      code: "usage",
      message: expect.stringContaining('--provider-timeout needs a number of seconds from 1 to 3600, not "soon"'),
    });
    const env = await runBinary(["sync", "--resolve", "--model", "compat:test", "--repo", repo, "--json"], {
      env: { ...ISOLATED_ENV, COPPERHEAD_BASE_URL: "http://127.0.0.1:9/v1", COPPERHEAD_PROVIDER_TIMEOUT: "0" },
    });
    expect(env.exitCode).toBe(3);
    expect(env.stdout).toContain("COPPERHEAD_PROVIDER_TIMEOUT needs a number of seconds");
    const deadline = await runBinary(
      ["do", REQUEST, "--model", "compat:test", "--provider-deadline", "a while", "--repo", repo, "--json"],
      {
        env: { ...ISOLATED_ENV, COPPERHEAD_BASE_URL: "http://127.0.0.1:9/v1" },
      },
    );
    expect(deadline.exitCode).toBe(3);
    expect(JSON.parse(deadline.stdout).error.message).toContain(
      '--provider-deadline needs a number of seconds from 1 to 14400, not "a while"',
    );
    expect(fingerprint(repo)).toEqual(before);
  }, 60_000);
});

describe("the default model", () => {
  test("with a key and no --model, the run uses the newest model of the default's family the provider lists", async () => {
    const repo = await copyRepo(template());
    const listed = [
      { id: "claude-opus-4-1-20250805", created_at: "2025-08-05T00:00:00Z" },
      { id: "claude-sonnet-4-20250514", created_at: "2025-05-14T00:00:00Z" },
      { id: "claude-sonnet-4-5-20250929", created_at: "2025-09-29T00:00:00Z" },
    ];
    const api = serveScriptedMessagesApi(sessionTurns("add-decoupling-cap"), "", [], listed);
    try {
      const result = await runBinary(["do", REQUEST, "--repo", repo, "--json"], {
        env: {
          ...ISOLATED_ENV,
          ANTHROPIC_API_KEY: "sk-ant-loopback-not-a-key",
          ANTHROPIC_BASE_URL: api.baseUrl,
          XDG_CACHE_HOME: await makeTempDir(),
        },
      });
      const summary = JSON.parse(result.stdout);
      expect({ exitCode: result.exitCode, status: summary.status }).toEqual({ exitCode: 0, status: "committed" });
      expect(result.stderr).toContain(
        `${DEFAULT_ANTHROPIC_MODEL} is not among the models ${api.baseUrl} lists; using claude-sonnet-4-5-20250929`,
      );
      expect(new Set(api.models)).toEqual(new Set(["claude-sonnet-4-5-20250929"]));
    } finally {
      await api.stop();
    }
  }, 240_000);
});
