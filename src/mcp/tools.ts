/**
 * The four outcome tools. Each one calls the same command-layer function as the
 * CLI and returns the same object; there is no file tool, no raw KiCad tool and no step of the
 * loop exposed on its own, so whatever a host does it cannot get around the spec gate, the
 * verification gate or the rollback.
 *
 * Each tool is declared as the model's tools are (util/tool-schema.ts): its arguments and its
 * result are valibot schemas, and the result schema is the one the command's result type is
 * inferred from, so the `outputSchema` a host reads cannot drift from what the tool returns.
 */
import * as v from "valibot";
import type { ProgressListener } from "../agent/progress.ts";
import type { HostSampler } from "../agent/providers/host.ts";
import { runCheck } from "../commands/check.ts";
import { MAX_REQUEST_BYTES, runDo } from "../commands/do.ts";
import { InitResultSchema, runInit } from "../commands/init.ts";
import { runSync, SyncResultSchema } from "../commands/sync.ts";
import { CopperheadError } from "../errors.ts";
import { CHECK_IDS, SeveritySchema } from "../checks/types.ts";
import { RunSummarySchema } from "../run/summary.ts";
import { CheckSummarySchema, summariseCheck } from "./check-summary.ts";
import { relayCheck, relayDo, relayInit, relaySync } from "./relay.ts";

export interface ToolRunContext {
  repo: string;
  signal: AbortSignal;
  /** Set when the client asked for progress (sent a progressToken). */
  onProgress?: ProgressListener;
  /** The client's model through sampling, for COPPERHEAD_MODEL=host. */
  host?: HostSampler;
}

/** An object schema: what a tool takes, and what it returns as `structuredContent`. */
type ObjectSchema = v.GenericSchema<Record<string, unknown>, Record<string, unknown>>;

export interface McpTool<I extends ObjectSchema = ObjectSchema, O extends ObjectSchema = ObjectSchema> {
  name: string;
  title: string;
  description: string;
  input: I;
  /** The result, whose type the handler returns: the tool's `outputSchema`. */
  output: O;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  run(args: v.InferOutput<I>, ctx: ToolRunContext): Promise<v.InferOutput<O>>;
  /** The relay block: what the result says, in a few plain sentences (relay.ts). */
  relay(result: v.InferOutput<O>): string;
}

/**
 * Types each tool's handler from its schemas, then erases them for the registry: arguments are
 * parsed by the input schema before any handler runs, and the handler returns what the output
 * schema describes.
 */
function defineMcpTool<I extends ObjectSchema, O extends ObjectSchema>(tool: McpTool<I, O>): McpTool {
  return tool as unknown as McpTool;
}

/** What every description ends with: which block of the result is which. */
const BLOCKS =
  "The result has two text blocks: first a few plain sentences to relay to your user as they are, then the JSON (byte for byte what the CLI's --json prints; structuredContent holds the same object).";

const KEYS =
  "Needs a model, chosen in the server's environment: COPPERHEAD_MODEL=host (this client's own model through sampling with tools; a client without it gets sampling_unsupported), COPPERHEAD_MODEL=claude-code or codex (the user's logged-in CLI), or a key (ANTHROPIC_API_KEY, OPENAI_API_KEY, or COPPERHEAD_BASE_URL for an OpenAI-compatible server); without one it returns the error missing_api_key and starts nothing.";

export const MCP_TOOLS = [
  defineMcpTool({
    name: "copperhead_check",
    title: "Check the KiCad design",
    description: [
      "Run copperhead's deterministic gate on the repo: KiCad ERC and DRC, schematic/board parity, routing, doc drift, the machine-checkable requirements in docs/SPEC.md and change-proposal format (plus fabrication readiness with fab). Read-only, no network, no model, no key needed.",
      "With baseline (a git ref such as HEAD or main), each finding is marked new, unchanged or absent against the design at that ref, and ok means nothing new fails.",
      "Returns a summary sized for you to hold: the verdict, counts per check, rule and severity, every new finding, and the first few findings of each rule, each with a stable key.",
      "For more, filter with only_new, check, rule and severity and page with limit and offset (page.next is the offset of the next page); the user's own `copperhead check --json` prints the full list.",
      "The result has two text blocks: first a few plain sentences to relay to your user as they are, then the summary as JSON (structuredContent holds the same object).",
    ].join(" "),
    input: v.strictObject({
      fab: v.optional(
        v.pipe(v.boolean(), v.description("Also check fabrication readiness; unconnected items become errors")),
      ),
      strict: v.optional(v.pipe(v.boolean(), v.description("Warnings fail too"))),
      baseline: v.optional(
        v.pipe(
          v.string(),
          v.trim(),
          v.minLength(1),
          v.maxLength(256),
          v.regex(/^[^-\s]\S*$/, "a git ref: a branch, a tag, a commit hash or HEAD~1"),
          v.description("Compare with the design at this git ref (e.g. HEAD, main): only findings new since then fail"),
        ),
      ),
      only_new: v.optional(
        v.pipe(v.boolean(), v.description("List only findings new against baseline (which it needs)")),
      ),
      check: v.optional(v.pipe(v.picklist(CHECK_IDS), v.description("List only this check's findings"))),
      rule: v.optional(
        v.pipe(
          v.string(),
          v.trim(),
          v.minLength(1),
          v.maxLength(200),
          v.description("List only this rule's findings (as in checks[].rules, e.g. pin_not_connected)"),
        ),
      ),
      severity: v.optional(v.pipe(SeveritySchema, v.description("List only findings of this severity"))),
      limit: v.optional(
        v.pipe(
          v.number(),
          v.integer(),
          v.minValue(1),
          v.maxValue(1000),
          v.description("List at most this many findings (fewer when they would not fit the answer)"),
        ),
      ),
      offset: v.optional(
        v.pipe(
          v.number(),
          v.integer(),
          v.minValue(0),
          v.description("Skip this many of the selected findings: the previous answer's page.next"),
        ),
      ),
    }),
    output: CheckSummarySchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: async (args, ctx) => {
      if (args.only_new && args.baseline === undefined) {
        throw new CopperheadError("usage", "only_new needs a baseline: a finding is new against a git ref.", {
          fix: 'Pass baseline too, e.g. "HEAD" or "main".',
        });
      }
      return summariseCheck(
        await runCheck({ repo: ctx.repo, fab: args.fab, strict: args.strict, baseline: args.baseline }),
        {
          onlyNew: args.only_new,
          check: args.check,
          rule: args.rule,
          severity: args.severity,
          limit: args.limit,
          offset: args.offset,
        },
      );
    },
    relay: relayCheck,
  }),
  defineMcpTool({
    name: "copperhead_do",
    title: "Change the design through the gated loop",
    description: [
      "Make one design change described in words, through copperhead's whole gated pipeline, with AUTO approval (recorded in the proposal, transcript and commit).",
      "Spec gate: nothing is edited until a change proposal naming the refs, nets and requirements involved is validated against the design and written to docs/changes/; the edits may then touch only what it names, unless the model amends it (validated and recorded the same way; proposal.amendments in the summary).",
      "Verification gate: nothing is committed until ERC, DRC, parity, doc drift and every requirement rule that passed before still pass; new findings get repair cycles.",
      "Otherwise the working tree is rolled back byte for byte — a rollback is a normal result (status rolled_back), not an error.",
      "Returns the run summary: status committed / rolled_back / refused / proposed (dry_run), commit, files touched, verification, transcript path, and for a verified change the design diff (parts, nets, pins moved, board, requirements, BOM rows — as `copperhead diff --json`).",
      "A request only the user can settle (ambiguous, or naming a part the design does not have) ends refused with reason needs_input and the model's question in detail: ask your user, then call again with the request and their answer.",
      "Sends progress notifications when the request has a progressToken. " + KEYS,
      BLOCKS,
    ].join(" "),
    input: v.strictObject({
      request: v.pipe(
        v.string(),
        v.trim(),
        v.minLength(1),
        v.maxLength(MAX_REQUEST_BYTES),
        v.description("The change, in words"),
      ),
      dry_run: v.optional(
        v.pipe(
          v.boolean(),
          v.description("Verify the change, keep diff.patch, then restore the tree: status proposed"),
        ),
      ),
    }),
    output: RunSummarySchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: (args, ctx) =>
      runDo({
        request: args.request,
        dryRun: args.dry_run,
        repo: ctx.repo,
        signal: ctx.signal,
        onProgress: ctx.onProgress,
        host: ctx.host,
      }),
    relay: relayDo,
  }),
  defineMcpTool({
    name: "copperhead_sync",
    title: "Verify (or resolve) design/doc consistency",
    description: [
      "Report whether the docs and board agree with the schematic: BOM drift, stale references, a board out of parity, committed changes missing from the CHANGELOG, missing DECISIONS/CHANGELOG — and every failing requirement rule.",
      "Without resolve it writes nothing and needs no key.",
      "With resolve it fixes drift: code regenerates the BOM and pinout, syncs the board and restores records without a model; only prose to reword needs one (a gated model run limited to docs and board sync).",
      "On a clean tree the fix goes through the same gated pipeline as copperhead_do, committing only if the result verifies, else rolling back byte for byte; beside uncommitted changes, drift code resolves is fixed in the working tree (listed in written) for the user to commit with them.",
      "Requirement violations are never changed: they are reported with needsHuman. Resolving prose: " + KEYS,
      BLOCKS,
    ].join(" "),
    input: v.strictObject({
      resolve: v.optional(v.pipe(v.boolean(), v.description("Fix drift through the gated pipeline"))),
    }),
    output: SyncResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    run: (args, ctx) =>
      runSync({
        repo: ctx.repo,
        resolve: args.resolve,
        signal: ctx.signal,
        onProgress: ctx.onProgress,
        host: ctx.host,
      }),
    relay: relaySync,
  }),
  defineMcpTool({
    name: "copperhead_init",
    title: "Set the repo up for copperhead",
    description:
      "Write .copperhead/config.json, docs/SPEC.md (with requirement rules suggested from the design), docs/BOM.md, DECISIONS.md, CHANGELOG.md and the pre-commit hook. Idempotent: each file reports created, unchanged, updated or refused; hand-edited generated regions and foreign hooks are never overwritten (force overwrites generated regions only). No network, no key needed. " +
      BLOCKS,
    input: v.strictObject({
      force: v.optional(v.pipe(v.boolean(), v.description("Regenerate hand-edited generated regions"))),
    }),
    output: InitResultSchema,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args, ctx) => runInit({ repo: ctx.repo, force: args.force }),
    relay: relayInit,
  }),
];
