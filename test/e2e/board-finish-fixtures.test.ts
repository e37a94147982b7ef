/**
 * The board-finish acceptance (support/board-finish.ts) on the repository's own corpus of dense,
 * poured real boards (`fixtures/corpus`): a decoupling capacitor next to an IC, then a power LED
 * with its series resistor (a net between the two new parts), each placed, routed, refilled and
 * clean by raw kicad-cli DRC, and the final board unchanged by KiCad's own refill.
 *
 * None may leave a part for layout. esp32-p4-devkit-revc, whose parts sit close on both sides,
 * once kept the LED's resistor staged below the outline for want of room beside the 5 V
 * regulator; it now finishes both sessions, and is held to that.
 *
 * pico-ice-rev3, a 51 × 21 mm board with 0402 parts packed on both sides between its two header
 * rows, hides 84 of its 101 references, and so do the parts added there (reference-style.ts):
 * with no room sought for a printed reference, the LED and its resistor find spots side by side
 * by U3, where with theirs shown they were 18 mm apart and their net was left for layout.
 */
import { finishSuite } from "../support/board-finish.ts";
import { fixtureCorpusProjects } from "../support/corpora.ts";

finishSuite("do on the repository's corpus: an added part arrives finished", fixtureCorpusProjects());
