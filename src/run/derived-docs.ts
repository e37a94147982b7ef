/**
 * Derived docs follow the design by code, never by the model: before every verification the
 * BOM table is regenerated from the design as it is now.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { currentDesign, type RunContext } from "../agent/context.ts";
import { CopperheadError } from "../errors.ts";
import { renderBom } from "../spec/bom.ts";

export function regenerateDerivedDocs(ctx: RunContext): void {
  const bom = `${ctx.docs}/BOM.md`;
  const path = join(ctx.repoRoot, bom);
  if (!existsSync(path)) return;
  const existing = readFileSync(path, "utf8");
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
