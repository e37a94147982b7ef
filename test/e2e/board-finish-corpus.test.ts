/**
 * Issue acceptance on the open-hardware corpus (KiCad 6–9): on every board, a decoupling
 * capacitor next to its main IC and then a power LED with its series resistor arrive placed,
 * routed, refilled and clean by raw kicad-cli DRC (support/board-finish.ts).
 *
 * Two boards may leave a part or a connection for layout, and the reason names what is in the way:
 * - hexpansion: its card-edge fan-out covers F.Cu between the connector and the header, so 3V3
 *   is reached only across other nets;
 * - uext-esp32-c3, a 14 × 32 mm module: the ESP32 module and its connectors hold the front, and
 *   the back is covered by its logos and text, so the LED's resistor finds its nearest free spot
 *   10 mm from the LED, with the UEXT signals' tracks between them on the back and the module's
 *   pads over them on the front: it is left for layout, naming those tracks.
 */
import { finishSuite } from "../support/board-finish.ts";
import { corpusProjects } from "../support/corpora.ts";

finishSuite("do on the corpus: an added part arrives finished", corpusProjects(), [
  "corpus/emf-hexpansion",
  "corpus/uext-esp32-c3",
]);
