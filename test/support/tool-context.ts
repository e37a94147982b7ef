/**
 * The agent's tools called directly, the way the loop calls them (arguments parsed by the tool's
 * schema, then its handler) on a real project in a real repo, inside the repo lock with a real
 * journal — so a test can drive one tool and look at the files it wrote, then roll back.
 */
import type { RunContext } from "../../src/agent/context.ts";
import { editTools } from "../../src/agent/tools/edit.ts";
import { readTools } from "../../src/agent/tools/read.ts";
import { viewTools } from "../../src/agent/tools/view.ts";
import { parseArgs, type Tool } from "../../src/agent/tools/tool.ts";
import { runCheck } from "../../src/commands/check.ts";
import { findKicadCli } from "../../src/kicad/cli/install.ts";
import { RunJournal } from "../../src/repo/journal.ts";
import { withRepoLock } from "../../src/repo/lock.ts";
import { discoverProject } from "../../src/repo/project.ts";
import { runLibraries } from "../../src/run/run-state.ts";
import { newRunId, runDir } from "../../src/repo/run-dir.ts";

const TOOLS = new Map<string, Tool<RunContext>>(
  [...readTools, ...viewTools, ...editTools].map((t) => [t.name, t as Tool<RunContext>]),
);

export interface ToolSession {
  ctx: RunContext;
  /** Calls a tool by name with raw (unvalidated) arguments, as a model would. */
  call(name: string, args?: unknown): Promise<unknown>;
}

/** Runs `fn` with a run context on the repo's project; whatever the tools wrote stays on disk. */
export async function withTools<T>(repo: string, fn: (session: ToolSession) => Promise<T>): Promise<T> {
  const cli = await findKicadCli();
  return withRepoLock(repo, async () => {
    const project = discoverProject(repo);
    const runId = newRunId();
    let journal: RunJournal | undefined;
    const ctx: RunContext = {
      repoRoot: project.repoRoot,
      project,
      docs: "docs",
      runId,
      libraries: runLibraries(project, cli),
      check: () => runCheck({ repo: project.repoRoot, project: project.projectFile, strict: false }),
      layoutPending: new Map(),
      decisions: [],
      beginEdits: () => {
        journal ??= RunJournal.begin(project.repoRoot, runId, runDir(project.repoRoot, runId));
        ctx.journal = journal;
        return journal;
      },
    };
    const call = async (name: string, args: unknown = {}) => {
      const tool = TOOLS.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      return tool.run(ctx, parseArgs(tool, args));
    };
    try {
      return await fn({ ctx, call });
    } finally {
      journal?.complete("committed");
    }
  });
}
