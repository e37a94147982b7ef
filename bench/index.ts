/** Runs every benchmark in turn; each prints ratios measured side by side. */
import { benchBoardFinish } from "./board-finish.bench.ts";
import { benchBoardSync } from "./board-sync.bench.ts";
import { benchCheck } from "./check.bench.ts";
import { benchDiff } from "./diff.bench.ts";
import { benchDo } from "./do.bench.ts";
import { benchEdit } from "./edit.bench.ts";
import { benchMcp } from "./mcp.bench.ts";
import { benchNetlist } from "./netlist.bench.ts";
import { benchPlacement } from "./placement.bench.ts";
import { benchRollback } from "./rollback.bench.ts";
import { benchSexpr } from "./sexpr.bench.ts";
import { benchSpec } from "./spec.bench.ts";
import { benchView } from "./view.bench.ts";

await benchSexpr();
await benchSpec();
await benchNetlist();
await benchEdit();
await benchCheck();
await benchBoardSync();
await benchPlacement();
await benchBoardFinish();
await benchDiff();
await benchRollback();
await benchDo();
await benchMcp();
await benchView();
