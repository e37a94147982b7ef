/**
 * Derived docs follow the design by code, never by the model: before every verification each
 * generated doc that the repo has (the BOM, the connector pinout) is regenerated from the design
 * as it is now.
 */
import { currentDesign, type RunContext } from "../agent/context.ts";
import { readRepoDoc } from "../repo/repo-files.ts";
import { CopperheadError } from "../errors.ts";
import { GENERATED_DOCS } from "../spec/generated-docs.ts";

export function regenerateDerivedDocs(ctx: RunContext): void {
  for (const doc of GENERATED_DOCS) {
    const path = `${ctx.docs}/${doc.file}`;
    const existing = readRepoDoc(ctx.repoRoot, path);
    if (existing === undefined) continue;
    let regenerated: string;
    try {
      regenerated = doc.render(currentDesign(ctx), existing);
    } catch (err) {
      // A table a person broke is theirs to mend (`init --force`); the drift check reports it.
      if (err instanceof CopperheadError) continue;
      throw err;
    }
    if (regenerated !== existing) (ctx.journal ?? ctx.beginEdits()).writeFile(path, regenerated);
  }
}
