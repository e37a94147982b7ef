/**
 * The approved proposal binds the edits (ARCHITECTURE.md, "Invariants"): inside a `do` run an
 * edit tool that would change a part or net the proposal does not name is refused before it
 * writes anything, and the refusal names the way out — `amend_proposal`, which widens the scope
 * through the same validation as the proposal itself. What "names" means is
 * kicad/proposal-scope.ts's, the same rule `sync_board` applies to the board.
 *
 * A run without a scope (`sync --resolve`, whose proposal copperhead wrote) is not confined.
 */
import { isVirtual, namesPart, uncoveredNet } from "../../kicad/proposal-scope.ts";
import type { RunContext } from "../context.ts";
import { ToolError } from "./tool.ts";

/** What one call changes, as its arguments (or its result) name it. */
export interface Touches {
  refs?: string[];
  nets?: string[];
}

/** A call refused because it reaches beyond the approved proposal. */
export class OutOfScope extends ToolError {
  override readonly code = "out_of_scope";

  constructor(
    tool: string,
    readonly refs: string[],
    readonly nets: string[],
  ) {
    super(outOfScopeMessage(tool, refs, nets));
  }
}

/**
 * Refuses the call when it touches what the proposal does not name. `nets` gives the design's
 * netlist names now (asked only when the call names a net), against which net arguments are
 * resolved as every tool resolves them.
 */
export function enforceScope(ctx: RunContext, tool: string, touches: Touches, nets: () => Iterable<string>): void {
  const scope = ctx.scope;
  if (!scope) return;
  const refs = [...new Set((touches.refs ?? []).filter((ref) => !isVirtual(ref) && !namesPart(scope, ref)))];
  const wanted = touches.nets ?? [];
  const known = wanted.length > 0 ? [...nets()] : [];
  const uncovered = [...new Set(wanted.flatMap((net) => uncoveredNet(scope, net, known)))];
  if (refs.length > 0 || uncovered.length > 0) throw new OutOfScope(tool, refs, uncovered);
}

function outOfScopeMessage(tool: string, refs: string[], nets: string[]): string {
  const what = [
    ...(refs.length ? [`${refs.length === 1 ? "part" : "parts"} ${refs.join(", ")}`] : []),
    ...(nets.length ? [`${nets.length === 1 ? "net" : "nets"} ${nets.join(", ")}`] : []),
  ].join(" and ");
  const args = [
    ...(refs.length ? [`refs or new_refs: ${JSON.stringify(refs)}`] : []),
    ...(nets.length ? [`nets or new_nets: ${JSON.stringify(nets)}`] : []),
  ].join(", ");
  return [
    `out of scope: ${tool} would change ${what}, which the approved proposal does not name; nothing was changed.`,
    `If the change really needs it, call amend_proposal (${args}, with why), then call ${tool} again; otherwise leave it alone.`,
  ].join("\n");
}
