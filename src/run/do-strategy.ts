/**
 * The `do` strategy: the model studies the design, proposes the change the user asked for, and
 * makes it once the proposal is approved. It gets every tool; the phase unlocks each by its effect.
 */
import type { RunContext } from "../agent/context.ts";
import { editTools } from "../agent/tools/edit.ts";
import { exitTools } from "../agent/tools/exit.ts";
import { readTools } from "../agent/tools/read.ts";
import { viewTools } from "../agent/tools/view.ts";
import { specTools } from "../agent/tools/spec.ts";
import type { Tool } from "../agent/tools/tool.ts";
import type { RunStrategy } from "./run-state.ts";

export const DO_TOOLS = [...readTools, ...viewTools, ...specTools, ...editTools, ...exitTools] as Tool<RunContext>[];

export function doStrategy(request: string): RunStrategy {
  return { request, tools: DO_TOOLS };
}
