/**
 * Issue acceptance on KiCad's demo boards with a zone, first half (the second is in
 * board-finish-demos-more.test.ts, so the two run in parallel): a decoupling capacitor next to
 * the main IC and then a power LED with its series resistor arrive placed, routed, refilled and
 * clean by raw kicad-cli DRC (support/board-finish.ts).
 */
import { DEMO_LEFT_FOR_LAYOUT, demosWithZones, finishSuite } from "../support/board-finish.ts";

const demos = demosWithZones();
finishSuite(
  "do on KiCad's demos: an added part arrives finished",
  demos.slice(0, Math.ceil(demos.length / 2)),
  DEMO_LEFT_FOR_LAYOUT,
);
