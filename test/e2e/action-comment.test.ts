/**
 * action.yml with `comment: true`: its steps run as a runner would run them (see
 * action-runner.ts), against the compiled binary and the real kicad-cli, on a pull request of
 * the usb-led fixture; the GitHub API is a loopback HTTP server that keeps the comments, and
 * the artifact upload is a stand-in that records what it was given.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { git } from "../repo/git-repo.ts";
import { cleanupTempDirs, copyFixture, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { rootSheet, setField } from "../support/usb-led-edits.ts";
import { loadAction, runCompositeAction, type CompositeAction, type StepResult } from "./action-runner.ts";
import { makeLocalRelease, type LocalRelease } from "./local-release.ts";

const ROOT = resolve(import.meta.dir, "../..");
const MARKER = "<!-- copperhead:pull-request-comment -->";
const TOKEN = "test-token-not-a-secret";
const BOT = "github-actions[bot]";

afterAll(cleanupTempDirs);

interface Comment {
  id: number;
  body: string;
  user: { login: string };
}

/** The part of the GitHub REST API the comment step talks to, for one pull request. */
class FakeGitHub {
  readonly comments: Comment[] = [];
  readonly requests: string[] = [];
  failWrites = false;
  private nextId = 100;
  private readonly server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) => this.handle(req),
  });

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  stop(): void {
    this.server.stop(true);
  }

  private async handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (req.headers.get("authorization") !== `Bearer ${TOKEN}`)
      return Response.json({ message: "Bad credentials" }, { status: 401 });
    // As for the Actions GITHUB_TOKEN, an installation token: it has no user of its own.
    if (url.pathname === "/user")
      return Response.json({ message: "Resource not accessible by integration" }, { status: 403 });
    const list = /^\/repos\/octo\/board\/issues\/7\/comments$/.exec(url.pathname);
    if (list && req.method === "GET") {
      const perPage = Number(url.searchParams.get("per_page") ?? 30);
      const page = Number(url.searchParams.get("page") ?? 1);
      return Response.json(this.comments.slice((page - 1) * perPage, page * perPage));
    }
    if (this.failWrites) return Response.json({ message: "Resource not accessible by integration" }, { status: 403 });
    if (list && req.method === "POST") {
      const comment = { id: this.nextId++, body: ((await req.json()) as { body: string }).body, user: { login: BOT } };
      this.comments.push(comment);
      return Response.json(
        { ...comment, html_url: `https://github.com/octo/board/pull/7#issuecomment-${comment.id}` },
        { status: 201 },
      );
    }
    const one = /^\/repos\/octo\/board\/issues\/comments\/(\d+)$/.exec(url.pathname);
    const comment = one && this.comments.find((c) => c.id === Number(one[1]));
    // Only a comment's author may edit it (this token posts as github-actions[bot]).
    if (comment && req.method === "PATCH" && comment.user.login !== BOT)
      return Response.json({ message: "Resource not accessible by integration" }, { status: 403 });
    if (comment && req.method === "PATCH") {
      comment.body = ((await req.json()) as { body: string }).body;
      return Response.json({ ...comment, html_url: `https://github.com/octo/board/pull/7#issuecomment-${comment.id}` });
    }
    return Response.json({ message: "Not Found" }, { status: 404 });
  }
}

let action: CompositeAction;
let release: LocalRelease;
let github: FakeGitHub;
beforeAll(async () => {
  await requireKicadCli();
  action = await loadAction(join(ROOT, "action.yml"));
  release = await makeLocalRelease();
  github = new FakeGitHub();
}, 60_000);
afterAll(() => github?.stop());

/** usb-led committed as the base, then a change committed on top: the pull request's head. */
async function pullRequest(): Promise<{ repo: string; base: string }> {
  const repo = await copyFixture("usb-led");
  await git(repo, "init", "--quiet", "--initial-branch=main");
  await git(repo, "add", "-A");
  await git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-m", "base");
  const base = (await git(repo, "rev-parse", "HEAD")).trim();
  const sheet = rootSheet(repo);
  sheet.moveSymbol("D1", 5.08, 0);
  sheet.save();
  setField(repo, "R3", "MPN", "RC0603FR-072K2L");
  await git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-am", "head");
  return { repo, base };
}

const uploads: Record<string, string>[] = [];

async function runAction(repo: string, pr: { number: string; base: string } | undefined) {
  const workspace = await makeTempDir();
  const temp = await makeTempDir();
  return runCompositeAction(
    action,
    { "release-url": release.url, "working-directory": repo, comment: "true" },
    {
      actionPath: ROOT,
      workspace,
      temp,
      github: {
        "github.token": TOKEN,
        "github.event.pull_request.number": pr?.number ?? "",
        "github.event.pull_request.base.sha": pr?.base ?? "",
      },
      env: { GITHUB_API_URL: github.url, GITHUB_REPOSITORY: "octo/board" },
      uses: {
        "actions/upload-artifact@v4": (inputs) => {
          uploads.push({ ...inputs, files: readdirSync(inputs.path!).sort().join(",") });
          return { "artifact-id": "42", "artifact-url": "https://github.com/octo/board/actions/runs/1/artifacts/42" };
        },
      },
    },
  );
}

/** Runs scripts/pr-comment.sh for pull request 7 with `markdown` as the diff. */
async function postComment(
  markdown: string,
  env: Record<string, string> = {},
): Promise<{ out: string; err: string; code: number }> {
  const proc = Bun.spawn(["bash", join(ROOT, "scripts/pr-comment.sh")], {
    env: {
      ...process.env,
      GITHUB_API_URL: github.url,
      GITHUB_REPOSITORY: "octo/board",
      GITHUB_TOKEN: TOKEN,
      PR_NUMBER: "7",
      DIFF_MARKDOWN: markdown,
      ...env,
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { out, err, code };
}

function describeSteps(steps: StepResult[]): string {
  return steps.map((s) => `--- ${s.name} (exit ${s.exitCode})\n${s.stdout}\n${s.stderr}`).join("\n");
}

describe("action.yml comment: true", () => {
  test("posts one comment with the check result, the design diff and the renders link, then updates it", async () => {
    github.comments.push({ id: 1, body: "Looks good to me", user: { login: "reviewer" } });
    const { repo, base } = await pullRequest();
    const steps = await runAction(repo, { number: "7", base });
    expect(
      steps.map((s) => `${s.name}: ${s.exitCode}`),
      describeSteps(steps),
    ).toEqual([
      "Install copperhead: 0",
      "Install KiCad 9: 0",
      "copperhead diff against the pull request's base: 0",
      "Upload the renders: 0",
      "Comment on the pull request: 0",
      "copperhead check: 0",
    ]);
    expect(uploads.at(-1)).toMatchObject({
      name: "copperhead-renders",
      "if-no-files-found": "ignore",
      files: "diff.md,usb-led.R3.png,usb-led.R3.svg,usb-led.after.svg,usb-led.before.svg,usb-led.diff.svg",
    });
    expect(steps[4]!.stdout).toContain("posted comment https://github.com/octo/board/pull/7#issuecomment-100");

    const ours = github.comments.filter((c) => c.body.startsWith(MARKER));
    expect(ours).toHaveLength(1);
    const body = ours[0]!.body;
    expect(body).toContain("## copperhead\n");
    expect(body).toMatch(/\*\*Check:\*\* passed — 0 error\(s\), \d+ warning\(s\)/);
    expect(body).toContain("`erc` pass");
    const head = (await git(repo, "rev-parse", "HEAD")).trim();
    expect(body).toContain(`### Design changes: ${base.slice(0, 7)} → HEAD (${head.slice(0, 7)})\n`);
    expect(body).toContain("- *moved* `D1` on `/`: (142.24, 101.6, 90°) → (147.32, 101.6, 90°)\n");
    expect(body).toContain("- *changed* `R3` on `/`: MPN `RC0603FR-071KL` → `RC0603FR-072K2L`\n");
    expect(body).toContain("[copperhead renders](https://github.com/octo/board/actions/runs/1/artifacts/42)");
    expect(github.comments.find((c) => c.id === 1)!.body).toBe("Looks good to me");

    // The next push: the same comment is edited, no second one appears.
    setField(repo, "R3", "Value", "1k");
    setField(repo, "R1", "MPN", "RC0603FR-074K7L");
    await git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-am", "another push");
    const again = await runAction(repo, { number: "7", base });
    expect(
      again.every((s) => s.exitCode === 0),
      describeSteps(again),
    ).toBe(true);
    expect(again[4]!.stdout).toContain("updated comment https://github.com/octo/board/pull/7#issuecomment-100");
    const after = github.comments.filter((c) => c.body.startsWith(MARKER));
    expect(after).toHaveLength(1);
    expect(after[0]!.body).toContain("`R1` on `/`: MPN");
    expect(github.requests.filter((r) => r.startsWith("PATCH"))).toEqual([
      "PATCH /repos/octo/board/issues/comments/100",
    ]);
  }, 180_000);

  test("a diff longer than a comment may be is cut at a line and says where the rest is", async () => {
    const dir = await makeTempDir();
    const lines = Array.from(
      { length: 4000 },
      (_, i) => `- *added* \`R${i + 1}\` \`10k\` (Device:R, Resistor_SMD:R_0603_1608Metric) on \`/\``,
    );
    const markdown = join(dir, "diff.md");
    writeFileSync(markdown, `### Design changes: 1234567 → HEAD (89abcde)\n\n**Parts**\n\n${lines.join("\n")}\n`);
    const { out, err, code } = await postComment(markdown, { RENDERS_URL: "https://example.com/a" });
    expect(code, err).toBe(0);
    expect(out).toMatch(/^(posted|updated) comment /);
    const body = github.comments.find((c) => c.body.startsWith(MARKER))!.body;
    expect(body.length).toBeLessThanOrEqual(65536);
    expect(body).toContain("- *added* `R1` `10k`");
    expect(body).not.toContain("`R4000`");
    expect(body).toMatch(
      /`R\d+` `10k` \(Device:R, Resistor_SMD:R_0603_1608Metric\) on `\/`\n\n\*The diff is longer than a comment may be/,
    );
    expect(body).toContain("[copperhead renders](https://example.com/a)");
  });

  test("not a pull request: a notice, no API call, and the check still runs", async () => {
    const { repo } = await pullRequest();
    const before = github.requests.length;
    const steps = await runAction(repo, undefined);
    expect(
      steps.map((s) => `${s.name}: ${s.exitCode}`),
      describeSteps(steps),
    ).toEqual([
      "Install copperhead: 0",
      "Install KiCad 9: 0",
      "copperhead diff against the pull request's base: 0",
      "copperhead check: 0",
    ]);
    expect(steps[2]!.stdout).toContain("::notice::comment: true, but this run is not for a pull request");
    expect(github.requests.length).toBe(before);
  }, 120_000);

  test("a token that may not comment: a warning, and the check still decides", async () => {
    const { repo, base } = await pullRequest();
    github.failWrites = true;
    try {
      const steps = await runAction(repo, { number: "8", base });
      expect(
        steps.map((s) => s.exitCode),
        describeSteps(steps),
      ).toEqual([0, 0, 0, 0, 0, 0]);
      expect(steps[4]!.stdout).toContain("::warning::could not comment on the pull request");
      expect(steps[4]!.stderr).toMatch(/40[34]/);
    } finally {
      github.failWrites = false;
    }
    expect(existsSync(join(repo, ".git"))).toBe(true);
  }, 120_000);

  test("a comment someone else started with the marker is left alone; a failed update says so", async () => {
    const markdown = join(await makeTempDir(), "diff.md");
    writeFileSync(markdown, "### Design changes: 1234567 → HEAD (89abcde)\n\nNo changes to the design.\n");
    const planted = { id: 5, body: `${MARKER}\nplanted by someone else`, user: { login: "mallory" } };
    github.comments.unshift(planted);
    const first = await postComment(markdown);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toMatch(
      /^(posted|updated) comment https:\/\/github.com\/octo\/board\/pull\/7#issuecomment-1\d\d\n$/,
    );
    expect(github.comments.find((c) => c.id === 5)).toEqual(planted);
    expect(github.requests).not.toContain("PATCH /repos/octo/board/issues/comments/5");

    // Ours exists now; an update the API refuses is reported as failed, never as done.
    github.failWrites = true;
    try {
      const refused = await postComment(markdown);
      expect(refused.code).not.toBe(0);
      expect(refused.out).not.toContain("updated comment");
      expect(refused.err).toMatch(/could not update comment 1\d\d: Resource not accessible by integration/);
    } finally {
      github.failWrites = false;
    }
  });

  test("pull-request text cannot issue workflow commands or hide the comment behind <!--", async () => {
    const { repo, base } = await pullRequest();
    setField(repo, "R3", "MPN", "x\n::error::forged\n::add-mask::hunter2\n::stop-commands::x\n<!-- the rest is hidden");
    await git(repo, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-am", "hostile");
    const steps = await runAction(repo, { number: "7", base });
    expect(
      steps.map((s) => s.exitCode),
      describeSteps(steps),
    ).toEqual([0, 0, 0, 0, 0, 0]);
    // Every line of the diff step that the runner would read as a command: only our own pair,
    // with the pull request's lines between them.
    const lines = steps[2]!.stdout.split("\n");
    const stop = lines.findIndex((l) => l.startsWith("::stop-commands::"));
    const token = lines[stop]!.slice("::stop-commands::".length);
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    const resume = lines.indexOf(`::${token}::`);
    expect(lines.slice(stop + 1, resume).some((l) => l.startsWith("::add-mask::hunter2"))).toBe(true);
    expect([...lines.slice(0, stop), ...lines.slice(resume + 1)].filter((l) => l.startsWith("::"))).toEqual([]);
    const body = github.comments.find((c) => c.body.startsWith(MARKER) && c.user.login === BOT)!.body;
    expect(body).toContain("&lt;!-- the rest is hidden");
    expect(body).not.toContain("<!-- the rest");
  }, 180_000);
});
