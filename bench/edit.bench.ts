/**
 * What a structured schematic edit costs once the project is open, side by side with loading
 * the project (reading and parsing every sheet) and with one native netlist of it: a sequence of
 * 20 edits (10 × `addComponent` of a capacitor, each followed by a `connect` of its first pin to
 * a power net) on corpus projects, then `changedFiles()` and printing what changed, as a save
 * does. Edits check their outcome against the netlist, so one edit costs at least a netlist;
 * anything far beyond that is work the edit does not need (printing or re-reading sheets).
 * Each round edits a fresh editor over the same read-only files and writes nothing.
 *
 * Then the same sequence the way a `do` run makes it: through the agent's edit tools, in a git
 * repo with the run's journal, each edit followed by a read tool (`list_nets`), as a model
 * checks what it did; side by side with the editor alone. The ratio is what the run adds to the
 * edits themselves: writing each changed sheet through the journal, and whatever a tool call
 * re-reads. Each round rolls the journal back, so every round starts from the same files.
 */
import { join, relative } from "node:path";
import { openLibraries, type Libraries } from "../src/kicad/library/libraries.ts";
import { buildNetlist } from "../src/kicad/netlist/netlist.ts";
import { SchematicEditor } from "../src/kicad/schematic/edit/editor.ts";
import { loadSchematicProject } from "../src/kicad/schematic/model/hierarchy.ts";
import type { RunContext } from "../src/agent/context.ts";
import { corpusProjects, demoProjects, demosDir, type CorpusProject } from "../test/support/corpora.ts";
import { initialisedCorpusRepo } from "../test/support/repos.ts";
import { withTools } from "../test/support/tool-context.ts";
import { compare, ms, ratio, report } from "./lib/measure.ts";

const EDITS = 10;

interface Target {
  name: string;
  root: string;
  net: string;
}

export async function benchEdit(): Promise<void> {
  const corpus = (id: string, net: string): Target => {
    const project = corpusProjects().find((p) => p.id === id)!;
    return { name: id, root: project.schematic!, net };
  };
  const targets: Target[] = [
    corpus("corpus/bms-c1", "GND"),
    corpus("corpus/glasgow-revc3", "GND"),
    corpus("corpus/rp2040-designguide", "GND"),
    { name: "demos/vme-wren", root: join(demosDir(), "vme-wren", "vme-wren.kicad_sch"), net: "GND" },
  ];
  report(
    `edit: ${EDITS} × (add_component + connect) = ${EDITS * 2} edits, then changedFiles and printing the changed sheets`,
  );
  for (const target of targets) {
    const libraries = await openLibraries(target.root.replace(/\.kicad_sch$/, ".kicad_pro"));
    const result = await compare(
      {
        edits: () => editSequence(target, libraries),
        load: () => loadSchematicProject(target.root),
        netlist: () => buildNetlist(loadSchematicProject(target.root)),
      },
      3,
    );
    const edits = result.edits!.median;
    const perEdit = edits / (EDITS * 2);
    report(
      `  ${target.name.padEnd(28)} ${EDITS * 2} edits ${ms(edits).padStart(9)} (${ms(perEdit)} each), load ${ms(result.load!.median).padStart(8)}, load+netlist ${ms(result.netlist!.median).padStart(8)}  per edit / load+netlist ${ratio(perEdit / result.netlist!.median)}`,
    );
  }
}

function editSequence(target: Target, libraries: Libraries, read = false): number {
  const editor = SchematicEditor.open(target.root, libraries, { within: join(target.root, "..") });
  for (let i = 0; i < EDITS; i++) {
    const added = editor.addComponent({ libId: "Device:C", value: "100n" });
    editor.connect(added.ref, "1", target.net);
    if (read) editor.netlist();
  }
  let bytes = 0;
  for (const path of editor.changedFiles()) bytes += editor.bytes(path).length;
  return bytes;
}

/** The edit sequence through the agent's tools against the editor alone, on vme-wren and a corpus board. */
export async function benchEditTools(): Promise<void> {
  const targets: CorpusProject[] = [
    demoProjects().find((p) => p.id === "demos/vme-wren/vme-wren")!,
    corpusProjects().find((p) => p.id === "corpus/bms-c1")!,
  ];
  report(
    `edit tools: ${EDITS} × (add_component + connect + list_nets) through the agent's tools and the run's journal, against the editor alone`,
  );
  for (const target of targets) {
    const repo = await initialisedCorpusRepo(target);
    const libraries = await openLibraries(join(repo, target.projectFile));
    const root = join(repo, relative(target.root, target.schematic!));
    const result = await compare(
      {
        editor: () => editSequence({ name: target.id, root, net: "GND" }, libraries, true),
        tools: () => withTools(repo, (session) => toolSequence(session)),
      },
      3,
    );
    const tools = result.tools!.median;
    const editor = result.editor!.median;
    report(
      `  ${target.id.padEnd(28)} tools ${ms(tools).padStart(9)}, editor alone ${ms(editor).padStart(9)}  tools / editor ${ratio(tools / editor)}`,
    );
  }
}

async function toolSequence({
  ctx,
  call,
}: {
  ctx: RunContext;
  call: (name: string, args?: unknown) => Promise<unknown>;
}): Promise<void> {
  try {
    for (let i = 0; i < EDITS; i++) {
      const added = (await call("add_component", { lib_id: "Device:C", value: "100n" })) as { ref: string };
      await call("connect", { ref: added.ref, pin: "1", net: "GND" });
      await call("list_nets", {});
    }
  } finally {
    ctx.journal?.rollback();
  }
}

if (import.meta.main) {
  await benchEdit();
  await benchEditTools();
}
