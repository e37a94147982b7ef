/**
 * `edit_doc`: the agent's only way to change prose. Docs folder only; the Requirements section
 * of SPEC.md belongs to humans, and the files copperhead derives (the BOM and pinout tables) or
 * appends to (DECISIONS, CHANGELOG, change proposals) are written by the pipeline, not the model.
 */
import * as v from "valibot";
import { isIgnored } from "../../repo/git.ts";
import { GENERATED_DOCS } from "../../spec/generated-docs.ts";
import { requirementsSectionTexts } from "../../spec/requirements.ts";
import { runJournal, type RunContext } from "../context.ts";
import { readRepoDoc } from "../../repo/repo-files.ts";
import { docPath } from "./paths.ts";
import { defineTool, ToolError } from "./tool.ts";

/** Docs the pipeline appends to; the generated ones (spec/generated-docs.ts) are refused too. */
const APPEND_ONLY_DOCS = ["DECISIONS.md", "CHANGELOG.md"];

/**
 * Whether copperhead writes this doc itself. Compared without case: on a case-insensitive
 * filesystem (macOS, Windows) `Changes/x.md` or `bom.md` is the protected file.
 */
function writtenByCopperhead(inDocs: string): boolean {
  const name = inDocs.toLowerCase();
  return (
    name.startsWith("changes/") ||
    [...GENERATED_DOCS.map((doc) => doc.file), ...APPEND_ONLY_DOCS].some((file) => file.toLowerCase() === name)
  );
}

export const docEditTool = defineTool({
  name: "edit_doc",
  effect: "edit",
  prose: ["old_text", "new_text"],
  description:
    "Edit a markdown doc under the docs folder: replace old_text (which must occur exactly once) with new_text; without old_text, new_text is appended (or creates the file). Never the Requirements section of SPEC.md, nor BOM/PINOUT/DECISIONS/CHANGELOG/changes (copperhead writes those).",
  schema: v.strictObject({
    path: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
    old_text: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(20_000))),
    new_text: v.pipe(v.string(), v.maxLength(20_000)),
  }),
  async run(ctx: RunContext, { path, old_text, new_text }) {
    const rel = docPath(ctx, path);
    if (writtenByCopperhead(rel.slice(ctx.docs.length + 1))) {
      throw new ToolError(
        `${rel} is written by copperhead itself (derived or append-only); use record_decision for decisions`,
      );
    }
    const before = readRepoDoc(ctx.repoRoot, rel);
    // The commit takes tracked and new files; an ignored one would stay changed outside it.
    if (await isIgnored(ctx.repoRoot, rel)) {
      throw new ToolError(
        `${rel} is ignored by git, so a change to it could not be committed; edit a tracked doc or create one git does not ignore`,
      );
    }
    let after: string;
    if (old_text === undefined)
      after =
        before === undefined ? new_text : before + (before.endsWith("\n") || before === "" ? "" : "\n") + new_text;
    else {
      if (before === undefined) throw new ToolError(`${rel} does not exist; omit old_text to create it`);
      const at = before.indexOf(old_text);
      if (at < 0) throw new ToolError(`old_text was not found in ${rel}; read_doc it and copy the text exactly`);
      if (before.indexOf(old_text, at + 1) >= 0)
        throw new ToolError(`old_text occurs more than once in ${rel}; include more context`);
      after = before.slice(0, at) + new_text + before.slice(at + old_text.length);
    }
    // Every Requirements section, not only the first: a second `## Requirements` appended
    // below is a change to the requirements too (the check reports it; the tool never makes it).
    const sectionsBefore = requirementsSectionTexts(before ?? "");
    if (!sameSections(sectionsBefore, requirementsSectionTexts(after))) {
      throw new ToolError(
        sectionsBefore.length > 0
          ? `the Requirements section of ${rel} is maintained by people only; copperhead will not change it, add to it or add another`
          : `${rel}: a Requirements section can only be written by people; copperhead will not create one`,
      );
    }
    runJournal(ctx).writeFile(rel, after);
    return { path: rel, bytes: Buffer.byteLength(after) };
  },
});

function sameSections(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((text, i) => text === b[i]);
}
