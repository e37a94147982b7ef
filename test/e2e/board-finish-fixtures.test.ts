/**
 * The board-finish acceptance (support/board-finish.ts) on the repository's own corpus of dense,
 * poured real boards (`fixtures/corpus`): a decoupling capacitor next to an IC, then a power LED
 * with its series resistor (a net between the two new parts), each placed, routed, refilled and
 * clean by raw kicad-cli DRC, and the final board unchanged by KiCad's own refill.
 *
 * esp32-p4-devkit-revc may leave a part for layout, naming what is in the way: its parts sit
 * close on both sides, and beside the 5 V regulator there is room for the capacitor and the LED,
 * not for the LED's resistor as well, which stays staged below the outline.
 *
 * Two boards of that corpus are not in it yet, for what they still show:
 * - sofle-v2-soldered: the capacitor's route closes a pocket of the back GND pour around U1's
 *   pin 23. KiCad's refill of the committed board leaves the pin a starved thermal relief; the
 *   windowed refill joins the pocket to the saved fill past the window's edge, so nothing sees it.
 * - blaustahl-v0: the capacitor arrives finished (its schematic, drawn off KiCad's connection
 *   grid, gets new symbols on it: schematic-placement.test.ts). The LED and its resistor, placed
 *   on the back beside it, close a pocket of the back GND pour that reached the rest of the pour
 *   through where they now sit: raw DRC's "missing connection" between two pieces of GND.
 */
import { finishSuite } from "../support/board-finish.ts";
import { fixtureCorpusProjects } from "../support/corpora.ts";

const OPEN = ["fixtures/sofle-v2-soldered", "fixtures/blaustahl-v0"];

finishSuite(
  "do on the repository's corpus: an added part arrives finished",
  fixtureCorpusProjects().filter((p) => !OPEN.includes(p.id)),
  ["fixtures/esp32-p4-devkit-revc"],
);
