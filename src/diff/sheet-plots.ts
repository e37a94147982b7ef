/**
 * The schematic plots a rendered diff is made from, started as soon as both states' projects
 * are found rather than once the states are loaded and compared. kicad-cli takes about a
 * second per state on a large design, longer than loading and comparing both states; started
 * first, the two plots run on the other cores while copperhead reads the design. Nearly every
 * change shows on a sheet (a value, a part, a wire), so the plots are begun on that bet; when
 * no sheet changed they are waited for and dropped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportSvg, type KicadCli } from "../kicad/cli/kicad-cli.ts";
import type { KicadProject } from "../repo/project.ts";
import type { DesignState } from "./design-state.ts";

type Side = "before" | "after";

export class SheetPlots {
  /** Settles once every kicad-cli run has started (or failed to start). */
  readonly started: Promise<void>;
  /** The temporary folder the plots are written to, removed by `close`. */
  readonly scratch: string;
  private readonly runs: Record<Side, Promise<string[] | Error> | undefined>;

  /** Begins plotting every sheet of each state that has the project. */
  constructor(projects: Record<Side, KicadProject | undefined>, cli: KicadCli) {
    this.scratch = mkdtempSync(join(tmpdir(), "copperhead-render-"));
    const starts: Promise<void>[] = [];
    const plot = (side: Side) => {
      const project = projects[side];
      if (!project) return undefined;
      const started = Promise.withResolvers<void>();
      const run = exportSvg(project.schematic, join(this.scratch, side), {
        cli,
        noBackground: true,
        onStart: started.resolve,
      }).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
      starts.push(Promise.race([started.promise, run.then(() => undefined)]));
      return run;
    };
    this.runs = { before: plot("before"), after: plot("after") };
    this.started = Promise.all(starts).then(() => undefined);
  }

  /**
   * Sheet path → its plot, matched by kicad-cli's plot order (page order); empty when the state
   * has no project or the plot failed, which `skipped` then says.
   */
  async of(state: DesignState, side: Side, skipped: string[]): Promise<Map<string, string>> {
    const plots = new Map<string, string>();
    const files = await this.runs[side];
    if (!files || !state.project) return plots;
    if (files instanceof Error) {
      skipped.push(`${side} sheets: ${files.message}`);
      return plots;
    }
    if (files.length !== state.sheets.length) {
      skipped.push(`${side}: kicad-cli plotted ${files.length} sheets, the design has ${state.sheets.length}`);
      return plots;
    }
    state.sheets.forEach((sheet, i) => plots.set(sheet.path, files[i]!));
    return plots;
  }

  /** Waits for every run to end (a plot nobody asked for included) and removes the plots. */
  async close(): Promise<void> {
    await Promise.all([this.runs.before, this.runs.after]);
    rmSync(this.scratch, { recursive: true, force: true });
  }
}
