/**
 * The board-finish acceptance (support/board-finish.ts) on vme-wren, KiCad's 70 MB, 12-layer
 * demo, in a file of its own so that it starts first and runs beside the rest of the suite.
 *
 * Every raw DRC of this board takes minutes, so it is asked for fewer of them than the others:
 * - its two requests run as one `do` (the capacitor, the LED and its resistor, one commit),
 *   which spares two (the run's own check and the test's of its commit);
 * - the final board refilled by KiCad is held against the commit by its fills around the new
 *   parts, which must equal KiCad's, not by a raw DRC of its own: the commit's raw DRC stands
 *   for the rest of the board, whose fills the change left as saved.
 */
import { demoProjects } from "../support/corpora.ts";
import { BIG_DEMO, finishSuite } from "../support/board-finish.ts";

const project = demoProjects().find((p) => p.id === BIG_DEMO);
if (!project) throw new Error(`${BIG_DEMO} is missing: scripts/setup.sh --test installs KiCad's demos`);
finishSuite("do on KiCad's demos: an added part arrives finished", [project], [], {
  timeoutMs: 3_600_000,
  together: true,
  refillDrc: false,
});
