/**
 * The board-finish acceptance (support/board-finish.ts) on vme-wren, KiCad's 70 MB, 12-layer
 * demo, in a file of its own so that it starts first and runs beside the rest of the suite.
 *
 * Its two requests run as one `do` (the capacitor, the LED and its resistor, one commit): every
 * raw DRC of this board takes minutes, and one run fewer spares two of them (the run's own check
 * and the test's of its commit) while the board is asked the same of as the others are.
 */
import { demoProjects } from "../support/corpora.ts";
import { BIG_DEMO, finishSuite } from "../support/board-finish.ts";

const project = demoProjects().find((p) => p.id === BIG_DEMO);
if (!project) throw new Error(`${BIG_DEMO} is missing: scripts/setup.sh --test installs KiCad's demos`);
finishSuite("do on KiCad's demos: an added part arrives finished", [project], [], {
  timeoutMs: 3_600_000,
  together: true,
});
