/**
 * Cold start of `copperhead mcp`, as a host sees it: from spawn to the `initialize` response,
 * then to the `tools/list` response, over real stdio. Three servers, interleaved round by round:
 * the compiled binary, the same server from source (`bun src/main.ts mcp`), and a Node-based
 * reference MCP server, `@modelcontextprotocol/server-filesystem` (a dev dependency used only
 * here). Target: initialize ≤ 100 ms for the compiled binary, and faster than both others.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { median, ms, ratio, report } from "./lib/measure.ts";

const ROOT = resolve(import.meta.dir, "..");
const ROUNDS = 15;

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } },
};
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" };
const TOOLS_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };

interface ColdStart {
  initialize: number;
  toolsList: number;
}

/** Spawns `cmd`, sends initialize at once, then tools/list after its response; both times from spawn. */
async function coldStart(cmd: string[]): Promise<ColdStart> {
  const start = performance.now();
  const proc = Bun.spawn(cmd, { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  proc.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
  await proc.stdin.flush();
  const times: Partial<ColdStart> = {};
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of proc.stdout) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const message = JSON.parse(buffer.slice(0, nl)) as { id?: number };
      buffer = buffer.slice(nl + 1);
      if (message.id === 1) {
        times.initialize = performance.now() - start;
        proc.stdin.write(`${JSON.stringify(INITIALIZED)}\n${JSON.stringify(TOOLS_LIST)}\n`);
        await proc.stdin.flush();
      } else if (message.id === 2) {
        times.toolsList = performance.now() - start;
        proc.kill();
      }
    }
    if (times.toolsList !== undefined) break;
  }
  await proc.exited;
  if (times.initialize === undefined || times.toolsList === undefined)
    throw new Error(`${cmd.join(" ")} did not answer initialize and tools/list`);
  return times as ColdStart;
}

export async function benchMcp(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "copperhead-bench-mcp-"));
  try {
    const servers: Record<string, string[]> = {
      "dist/copperhead mcp": [join(ROOT, "dist/copperhead"), "mcp", "--repo", dir],
      "bun src/main.ts mcp": ["bun", join(ROOT, "src/main.ts"), "mcp", "--repo", dir],
      "node server-filesystem": [
        "node",
        join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
        dir,
      ],
    };
    const names = Object.keys(servers);
    const runs: Record<string, ColdStart[]> = Object.fromEntries(names.map((n) => [n, []]));
    for (const name of names) await coldStart(servers[name]!); // warm-up: page cache, not the process
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of names) runs[name]!.push(await coldStart(servers[name]!));
    }
    const med = (name: string, key: keyof ColdStart) => median(runs[name]!.map((r) => r[key]));
    const binary = med(names[0]!, "initialize");
    report(`MCP cold start, spawn → initialize response → tools/list response, median of ${ROUNDS} interleaved rounds`);
    for (const name of names) {
      report(
        `  ${name.padEnd(24)} initialize ${ms(med(name, "initialize")).padStart(9)}   tools/list ${ms(med(name, "toolsList")).padStart(9)}`,
      );
    }
    report(`  compiled binary initialize vs the 100 ms budget  ${ratio(binary / 100, { max: 1 })}`);
    for (const name of names.slice(1))
      report(`  compiled binary vs ${name.padEnd(24)} ${ratio(binary / med(name, "initialize"), { max: 1 })}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await benchMcp();
