/**
 * The board-finish acceptance (support/board-finish.ts) on the repository's own corpus of dense,
 * poured real boards (`fixtures/corpus`): a decoupling capacitor next to an IC, then a power LED
 * with its series resistor (a net between the two new parts), each placed, routed, refilled and
 * clean by raw kicad-cli DRC, and the final board unchanged by KiCad's own refill.
 *
 * Two boards may leave a part for layout, naming what is in the way:
 * - esp32-p4-devkit-revc: its parts sit close on both sides, and beside the 5 V regulator there
 *   is room for the capacitor and the LED, not for the LED's resistor as well, which stays
 *   staged below the outline.
 * - blaustahl-v0: the LED and its resistor go on the back beside the capacitor, and the route
 *   between them crosses the neck through which a pocket of the back GND pour (U4's
 *   ground pin, C19's) reaches the rest of it. The route is taken up again and the two pads
 *   are left for layout, the pour whole (route/pour-cuts.ts).
 */
import { finishSuite } from "../support/board-finish.ts";
import { fixtureCorpusProjects } from "../support/corpora.ts";

finishSuite("do on the repository's corpus: an added part arrives finished", fixtureCorpusProjects(), [
  "fixtures/esp32-p4-devkit-revc",
  "fixtures/blaustahl-v0",
]);
