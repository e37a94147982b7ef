import { afterAll, describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { REDACTED } from "../../src/redact.ts";
import { Transcript, TRANSCRIPT_FILE } from "../../src/agent/transcript.ts";
import { CopperheadError } from "../../src/errors.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const CANARY = "transcript-canary-7a6b5c4d3e2f";
const SHAPED = "sk-ant-api03-CanaryCanaryCanary0123456789";

async function lines(t: Transcript): Promise<any[]> {
  const text = await readFile(t.path, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text.trimEnd().split("\n").map((l) => JSON.parse(l));
}

describe("Transcript", () => {
  test("writes <runDir>/transcript.jsonl, creating the run directory", async () => {
    const runDir = join(await makeTempDir(), "runs", "r1");
    const t = new Transcript(runDir, { env: {} });
    t.append({ type: "note", text: "hello" });
    expect(t.path).toBe(join(runDir, TRANSCRIPT_FILE));
    expect(await lines(t)).toEqual([{ seq: 1, t: expect.any(Number), type: "note", text: "hello" }]);
  });

  test("redacts at write time: canaries never reach the file", async () => {
    const t = new Transcript(await makeTempDir(), { env: { ANTHROPIC_API_KEY: CANARY } });
    t.append({
      type: "model_request",
      system: `key is ${CANARY}`,
      messages: [{ role: "user", content: [{ type: "text", text: `paste: ${SHAPED}` }] }],
      headers: { authorization: "Bearer some-long-token-value" },
    });
    t.append({ type: "error", error: new CopperheadError("provider_error", `failed with ${CANARY}`) });
    t.append({ type: "error", error: new Error(`plain ${SHAPED}`) });

    const text = await readFile(t.path, "utf8");
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain(SHAPED);
    expect(text).not.toContain("some-long-token-value");
    const [request, typed, plain] = await lines(t);
    expect(request.system).toBe(`key is ${REDACTED}`);
    expect(request.messages[0].content[0].text).toBe(`paste: ${REDACTED}`);
    expect(typed.error.error).toEqual({ code: "provider_error", message: `failed with ${REDACTED}` });
    expect(plain.error).toEqual({ name: "Error", message: `plain ${REDACTED}` });
  });

  test("extra secrets given to the writer are redacted", async () => {
    const t = new Transcript(await makeTempDir(), { env: {}, secrets: [CANARY] });
    t.append({ type: "note", text: CANARY });
    expect(await readFile(t.path, "utf8")).not.toContain(CANARY);
  });

  test("events keep their order, with increasing seq and a time offset from the run start", async () => {
    const startedAt = Date.now() - 5_000;
    const t = new Transcript(await makeTempDir(), { env: {}, startedAt });
    const types = ["phase", "model_request", "model_response", "tool_call", "tool_result", "verify", "repair", "commit", "rollback", "error", "note"];
    const written = types.map((type, i) => t.append({ type, i, seq: 999, t: -1 }));
    const read = await lines(t);
    expect(read).toEqual(written);
    expect(read.map((l) => l.type)).toEqual(types);
    expect(read.map((l) => l.seq)).toEqual(types.map((_, i) => i + 1));
    expect(read.map((l) => l.i)).toEqual(types.map((_, i) => i));
    for (const l of read) expect(l.t).toBeGreaterThanOrEqual(5_000);
    for (let i = 1; i < read.length; i++) expect(read[i].t).toBeGreaterThanOrEqual(read[i - 1].t);
  });

  test("appends to an existing file rather than truncating it", async () => {
    const dir = await makeTempDir();
    new Transcript(dir, { env: {} }).append({ type: "note", n: 1 });
    new Transcript(dir, { env: {} }).append({ type: "note", n: 2 });
    const text = await readFile(join(dir, TRANSCRIPT_FILE), "utf8");
    expect(text.trimEnd().split("\n").map((l) => JSON.parse(l).n)).toEqual([1, 2]);
  });
});
