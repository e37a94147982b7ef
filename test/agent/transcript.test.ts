import { afterAll, describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { REDACTED } from "../../src/redact.ts";
import { MAX_TRANSCRIPT_STRING, Transcript, TRANSCRIPT_FILE } from "../../src/agent/transcript.ts";
import { CopperheadError } from "../../src/errors.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

const CANARY = "transcript-canary-7a6b5c4d3e2f";
const SHAPED = "sk-ant-api03-CanaryCanaryCanary0123456789";

async function lines(t: Transcript): Promise<any[]> {
  const text = await readFile(t.path, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));
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
    const types = [
      "phase",
      "model_request",
      "model_response",
      "tool_call",
      "tool_result",
      "verify",
      "repair",
      "commit",
      "rollback",
      "error",
      "note",
    ];
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
    expect(
      text
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l).n),
    ).toEqual([1, 2]);
  });
});

describe("Transcript caps", () => {
  test("a string past the cap is cut, saying how long it was; keys too", async () => {
    const t = new Transcript(await makeTempDir(), { env: {} });
    const long = "y".repeat(MAX_TRANSCRIPT_STRING + 10);
    t.append({ type: "tool_call", input: { text: long, [long]: 1 } });
    const [line] = await lines(t);
    expect(line.input.text).toBe(
      `${"y".repeat(MAX_TRANSCRIPT_STRING)}… [cut: ${MAX_TRANSCRIPT_STRING + 10} characters in all]`,
    );
    expect(Object.keys(line.input)[1]).toStartWith("yyy");
    expect(Object.keys(line.input)[1]!.length).toBeLessThan(MAX_TRANSCRIPT_STRING + 50);
  });

  test("past the byte cap each event keeps its type and place, so the run's ending is still recorded", async () => {
    const t = new Transcript(await makeTempDir(), { env: {}, maxBytes: 1000 });
    for (let i = 0; i < 10; i++) t.append({ type: "model_response", text: "z".repeat(300) });
    t.append({ type: "commit", sha: "abc" });
    const all = await lines(t);
    expect(all).toHaveLength(11);
    // Each full line is about 350 bytes: two fit.
    expect(all.slice(0, 2).every((l) => l.text)).toBe(true);
    expect(all[2]).toEqual({
      seq: 3,
      t: expect.any(Number),
      type: "model_response",
      truncated: expect.stringContaining("cap of 1000 bytes"),
    });
    expect(all[10]).toMatchObject({ seq: 11, type: "commit" });
    const size = (await readFile(t.path)).byteLength;
    expect(size).toBeLessThan(1000 + 8 * 200);
  });
});
