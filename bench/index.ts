/** Runs every benchmark in turn; each prints ratios measured side by side. */
import { benchNetlist } from "./netlist.bench.ts";
import { benchSexpr } from "./sexpr.bench.ts";

await benchSexpr();
await benchNetlist();
