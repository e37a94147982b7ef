/**
 * The golden MCP protocol fixtures in fixtures/mcp/: `initialize` for protocol 2025-06-18 and
 * for the latest version the SDK supports, and `tools/list`. test/mcp/protocol.test.ts replays
 * the same requests and compares, so an SDK upgrade that changes what hosts see on the wire
 * shows up as a diff to review rather than slipping through.
 *
 *   bun scripts/gen-mcp-fixtures.ts      rewrite the fixtures after reviewing such a change
 *
 * Only `serverInfo.version` is normalised (it carries the git revision).
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { LATEST_PROTOCOL_VERSION, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer } from "../src/mcp/server.ts";

export const MCP_FIXTURES_DIR = resolve(import.meta.dir, "../fixtures/mcp");

export interface Exchange {
  request: JSONRPCMessage;
  response: JSONRPCMessage;
}

const initialize = (protocolVersion: string): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion, capabilities: {}, clientInfo: { name: "copperhead-golden", version: "1.0.0" } },
});

/** Sends `requests` (after an `initialize` for `protocolVersion`) to a fresh server; returns each response. */
async function exchange(protocolVersion: string, requests: JSONRPCMessage[]): Promise<Exchange[]> {
  const { server } = createMcpServer(process.cwd());
  const [client, serverSide] = InMemoryTransport.createLinkedPair();
  const responses = new Map<unknown, JSONRPCMessage>();
  client.onmessage = (message) => {
    if ("id" in message) responses.set(message.id, message);
  };
  await server.connect(serverSide);
  await client.start();
  const all = [
    initialize(protocolVersion),
    { jsonrpc: "2.0", method: "notifications/initialized" } as JSONRPCMessage,
    ...requests,
  ];
  const out: Exchange[] = [];
  for (const request of all) {
    await client.send(request);
    if (!("id" in request)) continue;
    while (!responses.has(request.id)) await new Promise((r) => setTimeout(r, 1));
    out.push({ request, response: normalise(responses.get(request.id)!) });
  }
  await server.close();
  return out;
}

function normalise(message: JSONRPCMessage): JSONRPCMessage {
  const copy = JSON.parse(JSON.stringify(message)) as { result?: { serverInfo?: { version?: string } } };
  if (copy.result?.serverInfo?.version) copy.result.serverInfo.version = "<version>";
  return copy as JSONRPCMessage;
}

/** File name → exchange, exactly as stored in fixtures/mcp/. */
export async function goldenExchanges(): Promise<Record<string, Exchange>> {
  const [pinned] = await exchange("2025-06-18", []);
  const [latest, toolsList] = await exchange(LATEST_PROTOCOL_VERSION, [
    { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
  ]);
  return {
    "initialize-2025-06-18.json": pinned!,
    "initialize-latest.json": latest!,
    "tools-list.json": toolsList!,
  };
}

export function fixtureText(exchange: Exchange): string {
  return `${JSON.stringify(exchange, null, 2)}\n`;
}

if (import.meta.main) {
  for (const [name, ex] of Object.entries(await goldenExchanges())) {
    writeFileSync(join(MCP_FIXTURES_DIR, name), fixtureText(ex));
    process.stderr.write(`wrote fixtures/mcp/${name}\n`);
  }
}
