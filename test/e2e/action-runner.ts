/**
 * Runs a composite action's steps the way a GitHub runner does, close enough to trust the
 * wiring: `${{ }}` expressions are evaluated in `env:` and `working-directory:` (inputs with
 * their defaults, github.action_path, github.workspace, runner.temp, steps.<id>.outputs.*),
 * each `run:` goes through `bash --noprofile --norc -eo pipefail`, and GITHUB_PATH and
 * GITHUB_OUTPUT files carry PATH entries and step outputs forward. An expression it does not
 * know fails the run, so nothing silently evaluates to "".
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
  shell?: string;
  run?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
}

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

function evaluate(text: string, context: Map<string, string>): string {
  return text.replace(EXPRESSION, (_, expr: string) => {
    const value = context.get(expr);
    if (value === undefined) throw new Error(`the test runner cannot evaluate \${{ ${expr} }}`);
    return value;
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
  options: { actionPath: string; workspace: string; temp: string },
): Promise<StepResult[]> {
  const context = new Map<string, string>([
    ["github.action_path", options.actionPath],
    ["github.workspace", options.workspace],
    ["runner.temp", options.temp],
  ]);
  for (const [name, input] of Object.entries(action.inputs)) context.set(`inputs.${name}`, inputs[name] ?? input.default ?? "");
  for (const name of Object.keys(inputs)) if (!(name in action.inputs)) throw new Error(`the action has no input "${name}"`);

  const githubPath = join(options.temp, "github_path");
  writeFileSync(githubPath, "");
  const results: StepResult[] = [];
  for (const [index, step] of action.runs.steps.entries()) {
    if (step.shell !== "bash" || step.run === undefined) throw new Error(`step "${step.name}" is not a bash run step`);
    const githubOutput = join(options.temp, `github_output_${index}`);
    writeFileSync(githubOutput, "");
    const script = join(options.temp, `step_${index}.sh`);
    writeFileSync(script, step.run);
    const addedPath = readFileSync(githubPath, "utf8").split("\n").filter(Boolean).reverse();
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, evaluate(String(v), context)]));
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
        ...stepEnv,
      },
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    results.push({ name: step.name, exitCode, stdout, stderr });
    if (exitCode !== 0) break;
    if (step.id) for (const [k, v] of parseOutputs(readFileSync(githubOutput, "utf8"))) context.set(`steps.${step.id}.outputs.${k}`, v);
  }
  return results;
}
