/**
 * Derived docs follow the design by code, never by the model: before every verification the
 * BOM table is regenerated from the design as it is now.
 */
import { currentDesign, readRepoText, type RunContext } from "../agent/context.ts";
import { CopperheadError } from "../errors.ts";
import { renderBom } from "../spec/bom.ts";

export function regenerateDerivedDocs(ctx: RunContext): void {
  const bom = `${ctx.docs}/BOM.md`;
  const existing = readRepoText(ctx, bom);
  if (existing === undefined) return;
  let regenerated: string;
  try {
    regenerated = renderBom(currentDesign(ctx), existing);
  } catch (err) {
    // A table a person broke is theirs to mend (`init --force`); the drift check reports it.
    if (err instanceof CopperheadError) return;
    throw err;
  }
  if (regenerated !== existing) (ctx.journal ?? ctx.beginEdits()).writeFile(bom, regenerated);
}
