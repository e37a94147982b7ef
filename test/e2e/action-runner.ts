/**
 * Runs a composite action's steps the way a GitHub runner does, close enough to trust the
 * wiring: `${{ }}` expressions are evaluated in `env:`, `with:` and `working-directory:` (inputs
 * with their defaults, github.action_path, github.workspace, runner.temp, steps.<id>.outputs.*,
 * and the `github.*` values a test passes), `if:` conditions of the form `a == 'x'`, `a != ''`
 * joined by `&&` decide whether a step runs, each `run:` goes through
 * `bash --noprofile --norc -eo pipefail`, a `uses:` step is played by the stand-in the test
 * gives for that action, and GITHUB_PATH and GITHUB_OUTPUT files carry PATH entries and step
 * outputs forward. An expression it does not know fails the run, so nothing silently evaluates
 * to "" (except a step output no step wrote, which is "" on a real runner too).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export interface ActionInput {
  description: string;
  default?: string;
}

export interface ActionStep {
  name: string;
  id?: string;
  if?: string;
  shell?: string;
  run?: string;
  uses?: string;
  with?: Record<string, string>;
  env?: Record<string, string>;
  "working-directory"?: string;
}

/** Plays a `uses:` action: gets its evaluated `with:` values, returns its outputs. */
export type UsesStandIn = (inputs: Record<string, string>) => Promise<Record<string, string>> | Record<string, string>;

export interface CompositeAction {
  name: string;
  inputs: Record<string, ActionInput>;
  runs: { using: string; steps: ActionStep[] };
}

export interface StepResult {
  name: string;
  exitCode: number;
  stdout: string;
  stderr: string;
}

const EXPRESSION = /\$\{\{\s*(.+?)\s*\}\}/g;

export async function loadAction(path: string): Promise<CompositeAction> {
  return Bun.YAML.parse(await Bun.file(path).text()) as CompositeAction;
}

/** Every `${{ }}` expression in `text`, trimmed. */
export function expressionsIn(text: string): string[] {
  return [...text.matchAll(EXPRESSION)].map((m) => m[1]!);
}

function lookup(expr: string, context: Map<string, string>): string {
  const value = context.get(expr);
  // An input's default may itself be an expression (`${{ github.token }}`), evaluated when used.
  if (value !== undefined) return expr.startsWith("inputs.") ? evaluate(value, context) : value;
  if (/^steps\.[\w-]+\.outputs\.[\w-]+$/.test(expr)) return "";
  throw new Error(`the test runner cannot evaluate \${{ ${expr} }}`);
}

function evaluate(text: string, context: Map<string, string>): string {
  return text.replace(EXPRESSION, (_, expr: string) => lookup(expr, context));
}

/** `a == 'x' && b != ''`: comparisons of a context value with a quoted literal, all of which must hold. */
function condition(text: string, context: Map<string, string>): boolean {
  const bare = text.trim().replace(/^\$\{\{\s*([\s\S]*?)\s*\}\}$/, "$1");
  return bare.split("&&").every((part) => {
    const m = /^\s*([\w.-]+)\s*(==|!=)\s*'([^']*)'\s*$/.exec(part);
    if (!m) throw new Error(`the test runner cannot evaluate the condition "${text}"`);
    const equal = lookup(m[1]!, context) === m[3];
    return m[2] === "==" ? equal : !equal;
  });
}

/** `name=value` lines, and `name<<DELIM` ... `DELIM` blocks, as GITHUB_OUTPUT holds them. */
function parseOutputs(text: string): Map<string, string> {
  const outputs = new Map<string, string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      outputs.set(heredoc[1]!, lines.slice(i + 1, end).join("\n"));
      i = end;
    } else if (line.includes("=")) {
      outputs.set(line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1));
    }
  }
  return outputs;
}

/**
 * Runs the steps in order and stops after the first one that fails, like a runner does.
 * `actionPath` is the action's checkout (github.action_path); `temp` is an empty dir.
 */
export async function runCompositeAction(
  action: CompositeAction,
  inputs: Record<string, string>,
  options: {
    actionPath: string;
    workspace: string;
    temp: string;
    /** More `github.*` context, e.g. `{ "github.event.pull_request.number": "7" }`. */
    github?: Record<string, string>;
    /** Variables the runner sets for every step (GITHUB_API_URL, GITHUB_REPOSITORY, …). */
    env?: Record<string, string>;
    /** Stand-ins for `uses:` steps, by the action they name (`actions/upload-artifact@v4`). */
    uses?: Record<string, UsesStandIn>;
  },
): Promise<StepResult[]> {
  const context = new Map<string, string>([
    ["github.action_path", options.actionPath],
    ["github.workspace", options.workspace],
    ["runner.temp", options.temp],
    ...Object.entries(options.github ?? {}),
  ]);
  for (const [name, input] of Object.entries(action.inputs))
    context.set(`inputs.${name}`, inputs[name] ?? input.default ?? "");
  for (const name of Object.keys(inputs))
    if (!(name in action.inputs)) throw new Error(`the action has no input "${name}"`);

  const githubPath = join(options.temp, "github_path");
  writeFileSync(githubPath, "");
  const results: StepResult[] = [];
  for (const [index, step] of action.runs.steps.entries()) {
    if (step.if !== undefined && !condition(step.if, context)) continue;
    if (step.uses !== undefined) {
      const standIn = options.uses?.[step.uses];
      if (!standIn) throw new Error(`step "${step.name}" uses ${step.uses}, and the test gave no stand-in for it`);
      const withValues = Object.fromEntries(
        Object.entries(step.with ?? {}).map(([k, v]) => [k, evaluate(String(v), context)]),
      );
      const outputs = await standIn(withValues);
      results.push({ name: step.name, exitCode: 0, stdout: "", stderr: "" });
      if (step.id) for (const [k, v] of Object.entries(outputs)) context.set(`steps.${step.id}.outputs.${k}`, v);
      continue;
    }
    if (step.shell !== "bash" || step.run === undefined) throw new Error(`step "${step.name}" is not a bash run step`);
    const githubOutput = join(options.temp, `github_output_${index}`);
    writeFileSync(githubOutput, "");
    const script = join(options.temp, `step_${index}.sh`);
    writeFileSync(script, step.run);
    const addedPath = readFileSync(githubPath, "utf8").split("\n").filter(Boolean).reverse();
    const stepEnv = Object.fromEntries(
      Object.entries(step.env ?? {}).map(([k, v]) => [k, evaluate(String(v), context)]),
    );
    const cwd = resolve(options.workspace, evaluate(step["working-directory"] ?? ".", context));
    const proc = Bun.spawn(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], {
      cwd,
      env: {
        ...process.env,
        PATH: [...addedPath, process.env.PATH].join(":"),
        GITHUB_PATH: githubPath,
        GITHUB_OUTPUT: githubOutput,
        GITHUB_WORKSPACE: options.workspace,
        RUNNER_TEMP: options.temp,
        ...options.env,
        ...stepEnv,
      },
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    results.push({ name: step.name, exitCode, stdout, stderr });
    if (exitCode !== 0) break;
    if (step.id)
      for (const [k, v] of parseOutputs(readFileSync(githubOutput, "utf8")))
        context.set(`steps.${step.id}.outputs.${k}`, v);
  }
  return results;
}
