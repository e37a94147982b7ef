/**
 * What routing a run's parts left, in the words the model and the run's records read: one line
 * per part (with any strip of pour its own pads leave too narrow), and the parts left for a
 * person with the reason (a run's layout-pending list).
 */
import { describeNarrowStrip } from "../zones/narrow-strips.ts";
import type { AddedConnections } from "./connect-added.ts";

/**
 * Records in `pending` what routing `refs` left and why (`BoardEditor.connect`), clearing the
 * parts that are now connected; returns one line per part.
 */
export function reportLayout(pending: Map<string, string>, layout: AddedConnections, refs: string[]): string[] {
  for (const ref of refs) {
    const left = layout.left.get(ref);
    if (left) pending.set(ref, left);
    else pending.delete(ref);
  }
  return layout.outcomes.map((o) => {
    const done = o.connected.map(
      (c) =>
        `pad ${c.pad} (${c.net}) ${c.how === "routed" ? `routed, ${c.length} mm${c.vias ? `, ${c.vias} via(s)` : ""}${c.pour ? ` into the ${c.net} pour` : ""}` : c.how === "pour" ? "through the pour" : "already connected"}`,
    );
    const left = o.left.map((l) => `pad ${l.pad} (${l.net}) left for layout: ${l.reason}`);
    const narrow = layout.narrow.filter((n) => n.ref === o.ref).map(describeNarrowStrip);
    return `${o.ref}: ${[...done, ...left, ...narrow].join("; ") || "nothing to connect"}`;
  });
}
