import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { CopperheadError } from "../../src/errors.ts";
import { LOCK_PATH, lockHolder, withRepoLock, type LockInfo } from "../../src/repo/lock.ts";
import { cleanupTempDirs, makeTempDir } from "../support/kicad.ts";

afterAll(cleanupTempDirs);

async function deadPid(): Promise<number> {
  const proc = Bun.spawn([process.execPath, "-e", "0"], { stdout: "ignore", stderr: "ignore" });
  await proc.exited;
  return proc.pid;
}

function writeLock(root: string, info: LockInfo): void {
  mkdirSync(join(root, ".copperhead"), { recursive: true });
  writeFileSync(join(root, LOCK_PATH), JSON.stringify(info));
}

async function busyError(promise: Promise<unknown>): Promise<CopperheadError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof CopperheadError && err.code === "busy") return err;
    throw err;
  }
  throw new Error("expected busy");
}

describe("withRepoLock", () => {
  test("calls in one process queue up and never overlap, even when one fails", async () => {
    const root = await makeTempDir();
    const events: string[] = [];
    const waited: string[] = [];
    const job = (name: string, fail = false) =>
      withRepoLock(
        root,
        async () => {
          events.push(`${name}:enter`);
          expect(JSON.parse(readFileSync(join(root, LOCK_PATH), "utf8")).pid).toBe(process.pid);
          await Bun.sleep(20);
          events.push(`${name}:exit`);
          if (fail) throw new Error(`${name} failed`);
          return name;
        },
        { onWait: () => waited.push(name) },
      );
    const results = await Promise.allSettled([job("a"), job("b", true), job("c")]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(events).toEqual(["a:enter", "a:exit", "b:enter", "b:exit", "c:enter", "c:exit"]);
    expect(waited).toEqual(["b", "c"]);
    expect(existsSync(join(root, LOCK_PATH))).toBe(false);
    expect(lockHolder(root)).toBeUndefined();
  });

  test("two spellings of one repo share one queue", async () => {
    const root = await makeTempDir();
    mkdirSync(join(root, "sub"));
    const events: string[] = [];
    const job = (path: string, name: string) =>
      withRepoLock(path, async () => {
        events.push(`${name}:enter`);
        await Bun.sleep(10);
        events.push(`${name}:exit`);
      });
    await Promise.all([job(root, "a"), job(join(root, "sub", ".."), "b")]);
    expect(events).toEqual(["a:enter", "a:exit", "b:enter", "b:exit"]);
  });

  test("records the run id and reports the holder while held", async () => {
    const root = await makeTempDir();
    await withRepoLock(
      root,
      () => {
        expect(lockHolder(root)).toMatchObject({
          pid: process.pid,
          hostname: hostname(),
          runId: "20260101T000000Z-abcdef",
        });
      },
      { runId: "20260101T000000Z-abcdef" },
    );
    expect(lockHolder(root)).toBeUndefined();
  });

  test("a live holder in another process is busy, naming its pid; SIGTERM makes it let go", async () => {
    const root = await makeTempDir();
    const script = join(await makeTempDir(), "holder.ts");
    writeFileSync(
      script,
      `import { withRepoLock } from ${JSON.stringify(resolve(import.meta.dir, "../../src/repo/lock.ts"))};
await withRepoLock(process.argv[2]!, async () => {
  console.log("locked");
  await Bun.sleep(60_000);
}, { runId: "20260101T000000Z-c0ffee" });
`,
    );
    const child = Bun.spawn([process.execPath, script, root], { stdout: "pipe", stderr: "pipe" });
    try {
      const reader = child.stdout.getReader();
      let seen = "";
      while (!seen.includes("locked")) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`the holder exited early: ${await new Response(child.stderr).text()}`);
        seen += new TextDecoder().decode(chunk.value);
      }
      expect(lockHolder(root)).toMatchObject({ pid: child.pid });
      const ran: string[] = [];
      const err = await busyError(withRepoLock(root, () => ran.push("ran")));
      expect(ran).toEqual([]);
      expect(err.message).toContain(`pid ${child.pid}`);
      expect(err.message).toContain("20260101T000000Z-c0ffee");
      expect(err.details).toMatchObject({ pid: child.pid, runId: "20260101T000000Z-c0ffee" });
      expect(err.fix).toContain(`kill ${child.pid}`);
    } finally {
      child.kill("SIGTERM");
    }
    await child.exited;
    expect(child.signalCode).toBe("SIGTERM");
    expect(existsSync(join(root, LOCK_PATH))).toBe(false);
    expect(await withRepoLock(root, () => "free again")).toBe("free again");
  });

  test("with withCancellation inside, SIGINT is an orderly stop: fn finishes, then the lock is released", async () => {
    const root = await makeTempDir();
    const script = join(await makeTempDir(), "cancel-holder.ts");
    writeFileSync(
      script,
      `import { withRepoLock, lockHolder } from ${JSON.stringify(resolve(import.meta.dir, "../../src/repo/lock.ts"))};
import { withCancellation } from ${JSON.stringify(resolve(import.meta.dir, "../../src/repo/cancel.ts"))};
const root = process.argv[2]!;
await withRepoLock(root, () => withCancellation(async (signal) => {
  console.log("locked");
  await new Promise((done) => signal.addEventListener("abort", done));
  console.log("rolled back; still held: " + (lockHolder(root) !== undefined));
}));
console.log("released: " + (lockHolder(root) === undefined));
`,
    );
    const child = Bun.spawn([process.execPath, script, root], { stdout: "pipe", stderr: "pipe" });
    const reader = child.stdout.getReader();
    let out = "";
    while (!out.includes("locked")) {
      const chunk = await reader.read();
      if (chunk.done) break;
      out += new TextDecoder().decode(chunk.value);
    }
    child.kill("SIGINT");
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
      out += new TextDecoder().decode(chunk.value);
    expect(await child.exited).toBe(0);
    expect(out).toContain("rolled back; still held: true");
    expect(out).toContain("released: true");
    expect(existsSync(join(root, LOCK_PATH))).toBe(false);
  });

  test("a stale lock (dead pid on this host, or this very pid) is taken over", async () => {
    const root = await makeTempDir();
    const pid = await deadPid();
    writeLock(root, { pid, hostname: hostname(), startedAt: "2026-01-01T00:00:00.000Z" });
    expect(lockHolder(root)).toBeUndefined();
    const holder = await withRepoLock(root, () => JSON.parse(readFileSync(join(root, LOCK_PATH), "utf8")) as LockInfo);
    expect(holder.pid).toBe(process.pid);
    expect(existsSync(join(root, LOCK_PATH))).toBe(false);

    // A container restart can give a new copperhead the pid of the one that crashed.
    writeLock(root, { pid: process.pid, hostname: hostname(), startedAt: "2026-01-01T00:00:00.000Z" });
    expect(await withRepoLock(root, () => "taken over")).toBe("taken over");
  });

  test("a lock from another host, or an unreadable one, is busy", async () => {
    const root = await makeTempDir();
    writeLock(root, { pid: 1, hostname: "build-box-7", startedAt: "2026-01-01T00:00:00.000Z" });
    const err = await busyError(withRepoLock(root, () => "no"));
    expect(err.message).toContain("build-box-7");
    expect(lockHolder(root)).toMatchObject({ hostname: "build-box-7" });

    writeFileSync(join(root, LOCK_PATH), "garbage");
    const unreadable = await busyError(withRepoLock(root, () => "no"));
    expect(unreadable.fix).toContain(LOCK_PATH);
    expect(readFileSync(join(root, LOCK_PATH), "utf8")).toBe("garbage");
  });
});
