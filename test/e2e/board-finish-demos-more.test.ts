/** Issue acceptance on KiCad's demo boards with a zone, second half (see board-finish-demos.test.ts). */
import { DEMO_LEFT_FOR_LAYOUT, demosWithZones, finishSuite } from "../support/board-finish.ts";

const demos = demosWithZones();
finishSuite(
  "do on KiCad's demos: an added part arrives finished",
  demos.slice(Math.ceil(demos.length / 2)),
  DEMO_LEFT_FOR_LAYOUT,
);
