/**
 * One agent CLI process, from spawn to teardown: the spawn and prompt-feeding stages of an
 * agent CLI session, its output read line by line, and its end.
 *
 * The CLI runs in a process group of its own, because it is not alone: it starts copperhead's
 * bridge as its MCP server, and a real CLI starts helpers of its own. Stopping it (a deadline, a
 * safety stop, the run's end) signals the whole group, so nothing it started outlives it or
 * keeps its pipes open.
 *
 * The prompt reaches the CLI on stdin, and longer texts (the system prompt, the MCP config) in
 * files of the run's private folder, mode 0600: nothing secret or private stands in its argv,
 * which any local user can read in the process table.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { OWN_GROUP, signalGroup } from "../../../util/signals.ts";
import type { Subprocess } from "bun";

export interface CliLaunch {
  executable: string;
  args: string[];
  /** The private folder it runs in; `files` are written there first, mode 0600. */
  dir: string;
  files?: Record<string, string>;
  env: Record<string, string | undefined>;
  /** Written to the CLI's stdin, which is then closed. */
  stdin: string;
}

export interface CliOutput {
  /** A complete line of stdout, trimmed, not empty. */
  line(text: string): void;
  /** Any output at all, stdout or stderr: the CLI is alive. */
  activity(): void;
  /** The process exited and its pipes are drained. */
  exit(code: number): void;
}

/** How long a CLI asked to stop (SIGTERM) may take before its group is killed. */
const STOP_GRACE_MS = 3000;
/** How much of the CLI's stderr is kept, for the message of a failed run. */
const STDERR_TAIL_CHARS = 2000;

export class CliProcess {
  private stderr = "";
  private stopped = false;

  private constructor(private readonly proc: Subprocess<"pipe", "pipe", "pipe">) {}

  /** Spawns the CLI in its own process group, feeds it the prompt and reads it until it exits. */
  static start(launch: CliLaunch, output: CliOutput): CliProcess {
    for (const [name, text] of Object.entries(launch.files ?? {}))
      writeFileSync(join(launch.dir, name), text, { mode: 0o600 });
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(launch.env)) if (value !== undefined) env[key] = value;
    const proc = Bun.spawn([launch.executable, ...launch.args], {
      cwd: launch.dir,
      env,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      // Its own session and process group: stop() reaches everything the CLI started.
      detached: OWN_GROUP,
    });
    const cli = new CliProcess(proc);
    cli.feed(launch.stdin);
    void (async () => {
      await Promise.all([readLines(proc.stdout, output), cli.readStderr(output)]);
      output.exit(await proc.exited);
    })();
    return cli;
  }

  /** The last of what the CLI wrote to stderr. */
  get stderrTail(): string {
    return this.stderr;
  }

  /** Whether it exits within `ms`; the timer never outlives the answer (it would hold the process open). */
  async exitsWithin(ms: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([this.proc.exited.then(() => true as const), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Ends the CLI and everything it started: SIGTERM to the group, SIGKILL to it after a grace.
   * The group is signalled even when the CLI itself has exited, for what it left running.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    signalGroup(this.proc, "SIGTERM");
    if (!(await this.exitsWithin(STOP_GRACE_MS))) this.proc.kill("SIGKILL");
    signalGroup(this.proc, "SIGKILL");
  }

  private feed(text: string): void {
    // A CLI that exits before reading its input closes the pipe: its exit says why, not EPIPE.
    try {
      this.proc.stdin.write(text);
      void Promise.resolve(this.proc.stdin.end()).catch(() => {});
    } catch {
      // reported by the exit
    }
  }

  private async readStderr(output: CliOutput): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stderr) {
      output.activity();
      this.stderr = (this.stderr + decoder.decode(chunk, { stream: true })).slice(-STDERR_TAIL_CHARS);
    }
  }
}

/** stdout as lines, however the chunks cut them. */
async function readLines(stream: ReadableStream<Uint8Array>, output: CliOutput): Promise<void> {
  let buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    output.activity();
    buffer += decoder.decode(chunk, { stream: true });
    let start = 0;
    let newline: number;
    while ((newline = buffer.indexOf("\n", start)) >= 0) {
      const line = buffer.slice(start, newline).trim();
      start = newline + 1;
      if (line) output.line(line);
    }
    buffer = buffer.slice(start);
  }
  if (buffer.trim()) output.line(buffer.trim());
}
