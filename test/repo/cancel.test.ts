import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { withCancellation } from "../../src/repo/cancel.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

/**
 * A child that runs `withCancellation` and stands in for the loop: on abort it "rolls back"
 * until it has seen `signalsDuringRollback` more SIGINTs (its own listener counts them).
 */
async function spawnCancellable(signalsDuringRollback: number) {
  const script = join(await makeTempDir(), "cancellable.ts");
  writeFileSync(
    script,
    `import { withCancellation } from ${JSON.stringify(resolve(import.meta.dir, "../../src/repo/cancel.ts"))};
const result = await withCancellation(async (signal) => {
  console.log("ready");
  await new Promise((done) => signal.addEventListener("abort", done));
  console.log("aborted: " + signal.reason.name + " " + signal.reason.message);
  for (let i = 0; i < ${signalsDuringRollback}; i++) {
    await new Promise((seen) => process.once("SIGINT", seen));
    console.log("signal during rollback");
  }
  return "rolled back";
});
console.log(result + "; listeners left: " + process.listenerCount("SIGINT") + "/" + process.listenerCount("SIGTERM"));
`,
  );
  const child = Bun.spawn([process.execPath, script], { stdout: "pipe", stderr: "pipe" });
  const reader = child.stdout.getReader();
  let out = "";
  /** Reads stdout until `text` has appeared `times` times. */
  const waitFor = async (text: string, times = 1): Promise<void> => {
    while (out.split(text).length - 1 < times) {
      const chunk = await reader.read();
      if (chunk.done) return;
      out += new TextDecoder().decode(chunk.value);
    }
  };
  const finish = async () => {
    await waitFor("\0never");
    return { out, err: await new Response(child.stderr).text(), code: await child.exited };
  };
  return { child, waitFor, finish };
}

describe("withCancellation", () => {
  test("SIGINT aborts the signal; a second one lets the rollback finish; handlers are removed", async () => {
    const { child, waitFor, finish } = await spawnCancellable(1);
    await waitFor("ready");
    child.kill("SIGINT");
    await waitFor("aborted");
    child.kill("SIGINT");
    const { out, err, code } = await finish();
    expect(code).toBe(0);
    expect(out).toContain("aborted: AbortError Cancelled by SIGINT");
    expect(out).toContain("signal during rollback");
    expect(out).toContain("rolled back; listeners left: 0/0");
    expect(err).toContain("finishing safely");
  });

  test("SIGTERM aborts too", async () => {
    const { child, waitFor, finish } = await spawnCancellable(0);
    await waitFor("ready");
    child.kill("SIGTERM");
    const { out, code } = await finish();
    expect(code).toBe(0);
    expect(out).toContain("aborted: AbortError Cancelled by SIGTERM");
  });

  test("a third signal exits at once with 130", async () => {
    const { child, waitFor, finish } = await spawnCancellable(3);
    await waitFor("ready");
    child.kill("SIGINT");
    await waitFor("aborted");
    child.kill("SIGINT");
    await waitFor("signal during rollback");
    child.kill("SIGINT");
    const { out, code } = await finish();
    expect(code).toBe(130);
    expect(out).not.toContain("rolled back");
  });

  test("an outer signal (an MCP request's cancellation) aborts with its reason", async () => {
    const outer = new AbortController();
    const reason = await withCancellation(
      async (signal) => {
        outer.abort(new Error("client cancelled"));
        return (signal.reason as Error).message;
      },
      { signal: outer.signal },
    );
    expect(reason).toBe("client cancelled");

    const already = new AbortController();
    already.abort(new Error("too late"));
    expect(await withCancellation(async (signal) => signal.aborted, { signal: already.signal })).toBe(true);
  });
});
