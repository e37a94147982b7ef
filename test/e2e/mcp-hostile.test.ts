/**
 * Hostile JSON-RPC frames against `copperhead mcp` (the compiled binary, raw stdio): every
 * request gets a response — `-32700` for a line that is not JSON, `-32600` for one that is not
 * a request, `-32602` naming the bad field for params that do not fit — never `-32603` with a
 * validation dump and never silence; and the server goes on serving afterwards. A repo whose
 * Sheetfile is `/dev/stdin` makes `copperhead_check` a typed tool error instead of reading the
 * server's own protocol stream, and so does a repo config whose model is `replay:/dev/stdin`
 * for `copperhead_do`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, ISOLATED_ENV } from "../support/repos.ts";
import { editFile } from "../support/variants.ts";
import { templateRepo } from "./binary.ts";
import { openMcpWire, type Frame } from "./mcp-wire.ts";

afterAll(cleanupTempDirs);

/** usb-led with `init` committed, copied per test. */
const template = templateRepo();

function serverEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...ISOLATED_ENV })) if (v !== undefined) env[k] = v;
  return env;
}

const call = (params: unknown) => ({ method: "tools/call", params });
const INIT = { name: "copperhead_init", arguments: {} };
const DEEP = 100_000;

/** Each hostile request, what it is, and the code and words its answer must carry. */
const CASES: [label: string, request: Record<string, unknown>, code: number, says: string][] = [
  [
    "progressToken an object",
    call({ ...INIT, _meta: { progressToken: { a: 1 } } }),
    -32602,
    "_meta.progressToken must be a string or an integer",
  ],
  [
    "progressToken an array",
    call({ ...INIT, _meta: { progressToken: [1] } }),
    -32602,
    "_meta.progressToken must be a string or an integer",
  ],
  [
    "progressToken a boolean",
    call({ ...INIT, _meta: { progressToken: true } }),
    -32602,
    "_meta.progressToken must be a string or an integer",
  ],
  [
    "progressToken null",
    call({ ...INIT, _meta: { progressToken: null } }),
    -32602,
    "_meta.progressToken must be a string or an integer",
  ],
  [
    "progressToken a fraction",
    call({ ...INIT, _meta: { progressToken: 1.5 } }),
    -32602,
    "_meta.progressToken must be a string or an integer",
  ],
  ["_meta a string", call({ ...INIT, _meta: "x" }), -32602, "_meta: expected object"],
  [
    "arguments a string",
    call({ name: "copperhead_init", arguments: "x" }),
    -32602,
    "arguments: expected an object, received string",
  ],
  [
    "arguments an array",
    call({ name: "copperhead_init", arguments: [1] }),
    -32602,
    "arguments: expected an object, received array",
  ],
  ["a numeric tool name", call({ name: 5, arguments: {} }), -32602, "name: expected string, received number"],
  ["params missing", { method: "tools/call" }, -32600, "Invalid Request"],
  [
    "a numeric cursor",
    { method: "tools/list", params: { cursor: 5 } },
    -32602,
    "cursor: expected string, received number",
  ],
  ["a cursor naming no page", { method: "tools/list", params: { cursor: "page-2" } }, -32602, "there is no page"],
];

describe("hostile frames", () => {
  test("every request gets an answer: -32602 or -32600 that names the field, never -32603 or silence", async () => {
    const wire = await openMcpWire(await copyRepo(template()), serverEnv());
    let id = 10;
    const answered: { label: string; error?: Frame["error"] }[] = [];
    for (const [label, request] of CASES) {
      const n = id++;
      await wire.send({ jsonrpc: "2.0", id: n, ...request });
      answered.push({ label, error: (await wire.response(n, 10_000)).error });
    }
    expect(answered).toEqual(
      CASES.map(([label, , code, says]) => ({ label, error: { code, message: expect.stringContaining(says) } })),
    );

    // Lines that are not requests at all.
    await wire.send("{not json");
    await wire.send("[1, 2]");
    await wire.send({ jsonrpc: "2.0", id: { nested: true }, method: "tools/list" });
    // Nested deeper than any request needs: bad input, not a stack overflow.
    await wire.send(
      `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"copperhead_check","arguments":{"fab":${'{"a":'.repeat(DEEP)}1${"}".repeat(DEEP)}}}}`,
    );
    expect((await wire.response("deep", 10_000)).error).toEqual({
      code: -32602,
      message: "Invalid params: nested more than 64 levels deep",
    });
    // A tool argument nested (a little) too deep for its schema is a typed tool error.
    await wire.send({
      jsonrpc: "2.0",
      id: "shallow",
      ...call({ name: "copperhead_check", arguments: { fab: { a: 1 } } }),
    });
    const shallow = await wire.response("shallow", 10_000);
    expect(shallow.result?.isError).toBe(true);

    // The server is still serving.
    await wire.send({ jsonrpc: "2.0", id: "after", method: "tools/list" });
    expect(((await wire.response("after", 10_000)).result?.tools as unknown[]).length).toBe(4);
    const { exitCode } = await wire.close();
    expect(exitCode).toBe(0);

    const nullIds = wire
      .frames()
      .filter((f) => f.id === null)
      .map((f) => f.error?.code);
    expect(nullIds).toEqual([-32700, -32600, -32600]);
    expect(wire.frames().some((f) => f.error?.code === -32603)).toBe(false);
  }, 60_000);

  test('copperhead_check on a repo whose Sheetfile is "/dev/stdin" is a typed tool error, and the protocol stream is untouched', async () => {
    const repo = await copyRepo(template());
    editFile(join(repo, "usb-led.kicad_sch"), (t) =>
      t.replace('(property "Sheetfile" "regulator.kicad_sch"', '(property "Sheetfile" "/dev/stdin"'),
    );
    const wire = await openMcpWire(repo, serverEnv());
    await wire.send({ jsonrpc: "2.0", id: 1, ...call({ name: "copperhead_check", arguments: {} }) });
    const result = (await wire.response(1, 30_000)).result!;
    expect(result.isError).toBe(true);
    const { error } = JSON.parse((result.content as { text: string }[])[1]!.text);
    expect(error.code).toBe("bad_path");
    expect(error.message).toContain("/dev/stdin");
    // Had the check read stdin, this request would have been swallowed.
    await wire.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    expect((await wire.response(2, 10_000)).result).toEqual({});
    await wire.close();
  }, 60_000);

  test('a repo config with "model": "replay:/dev/stdin" makes copperhead_do a typed tool error; the server keeps answering', async () => {
    const repo = await copyRepo(template());
    editFile(join(repo, ".copperhead/config.json"), (t) =>
      JSON.stringify({ ...JSON.parse(t), model: "replay:/dev/stdin" }, null, 2),
    );
    const wire = await openMcpWire(repo, serverEnv());
    await wire.send({
      jsonrpc: "2.0",
      id: 1,
      ...call({ name: "copperhead_do", arguments: { request: "add a test point" } }),
    });
    const result = (await wire.response(1, 30_000)).result!;
    expect(result.isError).toBe(true);
    const { error } = JSON.parse((result.content as { text: string }[])[1]!.text);
    expect(error.code).toBe("config_invalid");
    expect(error.message).toContain("replay: only with --model or COPPERHEAD_MODEL");
    await wire.send({ jsonrpc: "2.0", id: 2, method: "ping" });
    expect((await wire.response(2, 10_000)).result).toEqual({});
    await wire.close();
  }, 60_000);
});
