/**
 * Issue acceptance on the open-hardware corpus (KiCad 6–9): on every board, a decoupling
 * capacitor next to its main IC and then a power LED with its series resistor arrive placed,
 * routed, refilled and clean by raw kicad-cli DRC (support/board-finish.ts).
 *
 * The one board where a connection may be left for layout is hexpansion: its card-edge
 * fan-out covers F.Cu between the connector and the header, so 3V3 is reached only across
 * other nets, and the reason names them.
 */
import { finishSuite } from "../support/board-finish.ts";
import { corpusProjects } from "../support/corpora.ts";

finishSuite("do on the corpus: an added part arrives finished", corpusProjects(), "corpus/emf-hexpansion");
