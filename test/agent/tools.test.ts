/**
 * The agent's read and edit tools called one at a time on usb-led, the way the loop calls them:
 * what a model sees (board state, net names) and what an edit leaves on disk.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { rejectedToolError } from "../support/errors.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, initialisedRepo } from "../support/repos.ts";
import { withTools } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

/** usb-led with `init` committed: runs journal their edits, which needs a git repo. */
let template = "";
beforeAll(async () => {
  template = await initialisedRepo();
}, 60_000);

describe("read tools", () => {
  test("get_component shows the board footprint: library id, position, side, lock", async () => {
    const repo = await copyRepo(template);
    await withTools(repo, async ({ call }) => {
      const u1 = (await call("get_component", { ref: "U1" })) as Record<string, unknown>;
      expect(u1.board).toMatchObject({ footprint: expect.stringContaining("SOT-23-5"), side: "front", locked: false });
      expect(typeof (u1.board as { x: number }).x).toBe("number");
      expect(u1.excludeFromSim).toBe(false);
    });
  });

  test("one net-name resolution: get_net and rename_net both take the short name", async () => {
    const repo = await copyRepo(template);
    await withTools(repo, async ({ call }) => {
      expect(((await call("get_net", { name: "LED_A" })) as { name: string }).name).toBe("/LED_A");
      await call("rename_net", { from: "LED_A", to: "LED_DRIVE" });
      expect(((await call("get_net", { name: "LED_DRIVE" })) as { name: string }).name).toBe("/LED_DRIVE");
      expect(await rejectedToolError(call("get_net", { name: "LED_A" }))).toContain("No net named LED_A");
    });
  });
});

describe("set_attribute", () => {
  test("marks a part DNP and out of the BOM; a call naming nothing is refused", async () => {
    const repo = await copyRepo(template);
    await withTools(repo, async ({ call }) => {
      expect(await call("set_attribute", { ref: "R3", dnp: true, exclude_from_bom: true })).toEqual({ ref: "R3", dnp: true, exclude_from_bom: true });
      const r3 = (await call("get_component", { ref: "R3" })) as Record<string, unknown>;
      expect({ dnp: r3.dnp, inBom: r3.inBom, onBoard: r3.onBoard }).toEqual({ dnp: true, inBom: false, onBoard: true });
      expect(await rejectedToolError(call("set_attribute", { ref: "R3" }))).toContain("at least one attribute");
      expect(await rejectedToolError(call("set_attribute", { ref: "R9", dnp: true }))).toContain("No component R9");
    });
    expect(readFileSync(join(repo, "usb-led.kicad_sch"), "utf8")).toContain("(dnp yes)");
  });
});
