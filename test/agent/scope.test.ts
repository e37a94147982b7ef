/**
 * The approved proposal binds the edits: every edit tool, called the way the loop calls it on
 * usb-led with a run's scope, is refused — typed, naming what is out of scope and the way out,
 * with nothing written — when it touches a part or net the proposal does not name, and runs when
 * the proposal names it (net names resolved as every tool resolves them, units as their part).
 * Read tools are never confined.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OutOfScope } from "../../src/agent/tools/scope.ts";
import { ToolError } from "../../src/agent/tools/tool.ts";
import { coversNet, namesPart, partOf, uncoveredNet, widen } from "../../src/kicad/proposal-scope.ts";
import { cleanupTempDirs } from "../support/kicad.ts";
import { copyRepo, fingerprint, initialisedRepo } from "../support/repos.ts";
import { withTools, type ToolSession } from "../support/tool-context.ts";

afterAll(cleanupTempDirs);

let template = "";
beforeAll(async () => {
  template = await initialisedRepo();
}, 60_000);

/** The refusal a call ends in: it must be the typed out-of-scope error. */
async function refusal(promise: Promise<unknown>): Promise<OutOfScope> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof OutOfScope) return err;
    throw err;
  }
  throw new Error("expected the call to be refused as out of scope");
}

/** Runs `fn` on a fresh usb-led with the run's scope set to `names`. */
async function scoped(
  names: { refs: string[]; nets: string[] },
  fn: (session: ToolSession, repo: string) => Promise<void>,
): Promise<void> {
  const repo = await copyRepo(template);
  await withTools(repo, async (session) => {
    session.ctx.scope = names;
    await fn(session, repo);
  });
}

/** Asserts `call` is refused naming `refs` and `nets`, and that it wrote nothing. */
async function expectRefused(repo: string, call: Promise<unknown>, refs: string[], nets: string[]): Promise<string> {
  const before = fingerprint(repo);
  const err = await refusal(call);
  expect({ code: err.code, refs: err.refs, nets: err.nets }).toEqual({ code: "out_of_scope", refs, nets });
  expect(err.message).toContain("the approved proposal does not name");
  expect(err.message).toContain("amend_proposal");
  expect(fingerprint(repo)).toEqual(before);
  return err.message;
}

const C3 = { lib_id: "Device:C", value: "100n", footprint: "Capacitor_SMD:C_0603_1608Metric" };

describe("the proposal binds every edit tool", () => {
  test("add_component: a new part the proposal does not list, given or numbered by the editor, and a net it wires to", async () => {
    await scoped({ refs: ["U1", "C3"], nets: ["+3V3"] }, async (session, repo) => {
      const { call, ctx } = session;
      const message = await expectRefused(repo, call("add_component", { ...C3, ref: "C7", near: "U1" }), ["C7"], []);
      expect(message).toStartWith(
        "out of scope: add_component would change part C7, which the approved proposal does not name; nothing was changed.",
      );
      expect(message).toContain('amend_proposal (refs or new_refs: ["C7"], with why)');
      // No ref given: the editor numbers it C3 — and a resistor would be R4, which is not named.
      await expectRefused(repo, call("add_component", { lib_id: "Device:R", value: "10k", near: "U1" }), ["R4"], []);
      await expectRefused(
        repo,
        call("add_component", { ...C3, near: "U1", connect: { "1": "+3V3", "2": "GND" } }),
        [],
        ["GND"],
      );
      expect(ctx.journal).toBeUndefined();
      // Its near and like parts are only read: U1 and C2 need not be named for that.
      expect(await call("add_component", { ...C3, like: "C2", near: "U1", connect: { "1": "+3V3" } })).toMatchObject({
        ref: "C3",
        refs: ["C3"],
      });
    });
  }, 60_000);

  test("connect: the pin's part and the net, the net by its netlist or short name; power symbols it draws are covered", async () => {
    await scoped({ refs: ["C3"], nets: ["/LED_A", "GND"] }, async (session, repo) => {
      const { call } = session;
      await call("add_component", { ...C3, near: "R3" });
      await expectRefused(repo, call("connect", { ref: "C3", pin: "1", net: "+3V3" }), [], ["+3V3"]);
      await expectRefused(repo, call("connect", { ref: "D1", pin: "2", net: "LED_A" }), ["D1"], []);
      await expectRefused(repo, call("connect", { ref: "C3", pin: "1", net: "LED_B" }), [], ["LED_B"]);
      // The short name resolves to /LED_A, which the proposal names.
      expect(await call("connect", { ref: "C3", pin: "1", net: "LED_A" })).toEqual({
        ref: "C3",
        pin: "1",
        net: "LED_A",
      });
      // GND is drawn as a power symbol (#PWR…): wiring, not a part.
      expect(await call("connect", { ref: "C3", pin: "2", net: "GND" })).toEqual({ ref: "C3", pin: "2", net: "GND" });
    });
  }, 60_000);

  test("a net the change creates is covered when the proposal lists it, whatever sheet path the edit gives it", async () => {
    await scoped({ refs: ["C3"], nets: ["EN_SENSE"] }, async ({ call }) => {
      await call("add_component", { ...C3, near: "R3" });
      await call("connect", { ref: "C3", pin: "1", net: "EN_SENSE" });
      expect(((await call("get_net", { name: "EN_SENSE" })) as { name: string }).name).toBe("/EN_SENSE");
    });
  }, 60_000);

  test("move_symbol, remove_component, set_field, set_attribute, disconnect, mark_no_connect: the part they change", async () => {
    await scoped({ refs: ["R1"], nets: [] }, async (session, repo) => {
      const { call } = session;
      await expectRefused(repo, call("move_symbol", { ref: "R2", near: "R1" }), ["R2"], []);
      await expectRefused(repo, call("remove_component", { ref: "R2" }), ["R2"], []);
      await expectRefused(repo, call("set_field", { ref: "R2", field: "Value", value: "10k" }), ["R2"], []);
      await expectRefused(repo, call("set_attribute", { ref: "R2", dnp: true }), ["R2"], []);
      await expectRefused(repo, call("disconnect", { ref: "R2", pin: "1" }), ["R2"], []);
      await expectRefused(repo, call("mark_no_connect", { ref: "U1", pin: "4" }), ["U1"], []);
      // Renumbering a named part touches the reference it gets, too.
      await expectRefused(repo, call("set_field", { ref: "R1", field: "Reference", value: "R9" }), ["R9"], []);
      expect(await call("set_field", { ref: "R1", field: "Value", value: "5.6k" })).toEqual({
        ref: "R1",
        field: "Value",
        value: "5.6k",
      });
      expect(await call("set_attribute", { ref: "R1", dnp: true })).toEqual({ ref: "R1", dnp: true });
      expect(await call("move_symbol", { ref: "R1", near: "J1" })).toMatchObject({ ref: "R1" });
    });
  }, 60_000);

  test("add_sheet: every net it carries", async () => {
    await scoped({ refs: [], nets: ["GND"] }, async (session, repo) => {
      const { call } = session;
      const sheet = { name: "Sense", file: "sense.kicad_sch" };
      await expectRefused(repo, call("add_sheet", { ...sheet, nets: ["GND", "/LED_A"] }), [], ["/LED_A"]);
      expect(await call("add_sheet", { ...sheet, nets: ["GND"] })).toMatchObject({ sheet: "/Sense/" });
    });
  }, 60_000);

  test("rename_net: the net renamed and the name it gets", async () => {
    await scoped({ refs: [], nets: ["/LED_A"] }, async (session, repo) => {
      const { call } = session;
      await expectRefused(repo, call("rename_net", { from: "/CC1", to: "CC_A" }), [], ["/CC1", "CC_A"]);
      await expectRefused(repo, call("rename_net", { from: "LED_A", to: "LED_DRIVE" }), [], ["LED_DRIVE"]);
    });
    await scoped({ refs: [], nets: ["/LED_A", "/LED_DRIVE"] }, async ({ call }) => {
      expect(await call("rename_net", { from: "LED_A", to: "LED_DRIVE" })).toEqual({ from: "LED_A", to: "LED_DRIVE" });
    });
  }, 60_000);

  test("move_label: the net the label names", async () => {
    await scoped({ refs: [], nets: ["/CC1"] }, async (session, repo) => {
      await expectRefused(
        repo,
        session.call("move_label", { net: "LED_A", to: [142.24, 96.52], rotation: 180 }),
        [],
        ["/LED_A"],
      );
    });
    await scoped({ refs: [], nets: ["/LED_A"] }, async ({ call }) => {
      expect(await call("move_label", { net: "LED_A", to: [142.24, 96.52], rotation: 180 })).toMatchObject({
        net: "/LED_A",
        at: [142.24, 96.52],
      });
    });
  }, 60_000);

  test("place_footprint: the footprint moved, not the one it is placed next to", async () => {
    await scoped({ refs: ["C3"], nets: ["+3V3", "GND"] }, async (session, repo) => {
      const { call } = session;
      await call("add_component", { ...C3, near: "U1", connect: { "1": "+3V3", "2": "GND" } });
      await call("sync_board");
      await expectRefused(repo, call("place_footprint", { ref: "R1", near: "C3" }), ["R1"], []);
      // C3 is named, so the scope lets the call through; sync_board routed it, and it moves
      // with the run's own tracks lifted and laid again.
      expect(await call("place_footprint", { ref: "C3", near: "R1" })).toMatchObject({ ref: "C3" });
    });
  }, 60_000);

  test("read tools are never confined; a run without a scope (sync's own proposal) is not either", async () => {
    await scoped({ refs: [], nets: [] }, async ({ call }) => {
      expect(await call("get_component", { ref: "R2" })).toMatchObject({ ref: "R2" });
      expect(await call("get_net", { name: "CC2" })).toMatchObject({ name: "/CC2" });
    });
    const repo = await copyRepo(template);
    await withTools(repo, async ({ call, ctx }) => {
      expect(ctx.scope).toBeUndefined();
      expect(await call("set_field", { ref: "R2", field: "Value", value: "5.6k" })).toEqual({
        ref: "R2",
        field: "Value",
        value: "5.6k",
      });
    });
  }, 60_000);

  test("the refusal is a tool error the loop hands to the model", async () => {
    await scoped({ refs: [], nets: [] }, async ({ call }) => {
      const err = await refusal(call("remove_component", { ref: "R2" }));
      expect(err).toBeInstanceOf(ToolError);
    });
  }, 60_000);
});

describe("what a proposal names", () => {
  test("a unit is its part", () => {
    expect(partOf("U1A")).toBe("U1");
    expect(partOf("U12AB")).toBe("U12");
    expect(partOf("R10")).toBe("R10");
    expect(namesPart({ refs: ["U1"], nets: [] }, "U1B")).toBe(true);
    expect(namesPart({ refs: ["U1A"], nets: [] }, "U1")).toBe(true);
    expect(namesPart({ refs: ["U1"], nets: [] }, "U11")).toBe(false);
  });

  test("a netlist name names that net; a short name names the sheet-local nets of that name", () => {
    const names = { refs: [], nets: ["/DATA", "CLK", "+3V3"] };
    expect(coversNet(names, "/DATA")).toBe(true);
    expect(coversNet(names, "/Sub/DATA")).toBe(false);
    expect(coversNet(names, "/Sub/CLK")).toBe(true);
    expect(coversNet(names, "+3V3")).toBe(true);
    expect(coversNet(names, "3V3")).toBe(false);
  });

  test("a tool's net argument is resolved first: exact, unique short name, ambiguous, or new", () => {
    const nets = ["/DATA", "/A/SDA", "/B/SDA", "GND"];
    const names = { refs: [], nets: ["/DATA", "/A/SDA", "NEW_NET"] };
    expect(uncoveredNet(names, "DATA", nets)).toEqual([]);
    expect(uncoveredNet(names, "GND", nets)).toEqual(["GND"]);
    expect(uncoveredNet(names, "SDA", nets)).toEqual(["/B/SDA"]);
    expect(uncoveredNet(names, "NEW_NET", nets)).toEqual([]);
    expect(uncoveredNet(names, "/NEW_NET", nets)).toEqual([]);
    expect(uncoveredNet(names, "OTHER", nets)).toEqual(["OTHER"]);
  });

  test("an amendment widens the names, each once", () => {
    expect(widen({ refs: ["U1"], nets: ["GND"] }, { refs: ["U1", "R4"], nets: ["VCC"] })).toEqual({
      refs: ["U1", "R4"],
      nets: ["GND", "VCC"],
    });
  });
});
