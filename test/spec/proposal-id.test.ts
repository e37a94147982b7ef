/** Proposal ids say what their titles say: whole words, signs spelled, values as schematics write them. */
import { describe, expect, test } from "bun:test";
import { proposalSlug } from "../../src/spec/proposal-id.ts";

describe("proposalSlug", () => {
  test("signs are spelled: +12V and -12V are two rails", () => {
    expect(proposalSlug("Add bulk capacitors on +12V and -12V at the regulator inputs")).toBe(
      "add-bulk-capacitors-on-plus-12v-and-minus-12v",
    );
    expect(proposalSlug("Add 4.7µF on ±5V")).toBe("add-4u7f-on-plus-minus-5v");
    expect(proposalSlug("Decouple the −5V rail")).toBe("decouple-the-minus-5v-rail");
    // A hyphen inside a word is no sign.
    expect(proposalSlug("Add a pull-up to X-12 first")).toBe("add-a-pull-up-to-x-12-first");
  });

  test("whole words only, cut where the next word does not fit, never after a word that leads into another", () => {
    expect(proposalSlug("Add series resistors R17 (1kΩ) and R18 to the status LEDs on the front panel")).toBe(
      "add-series-resistors-r17-1k-and-r18",
    );
    expect(proposalSlug("Add a 100 nF decoupling capacitor on the LDO output")).toBe(
      "add-a-100-nf-decoupling-capacitor-on-the-ldo",
    );
    for (const title of [
      "Add bulk capacitors on +12V and -12V at the regulator inputs",
      "Move the status LED and its resistor closer to the edge of the board near J1",
    ]) {
      const slug = proposalSlug(title);
      expect(slug.length).toBeLessThanOrEqual(48);
      const words = title
        .toLowerCase()
        .replace(/\+/g, "plus ")
        .replace(/-(?=\d)/g, "minus ")
        .split(/[^a-z0-9]+/);
      for (const word of slug.split("-")) expect(words).toContain(word);
    }
  });

  test("decimals keep their digits together; the slug never ends in a bare number, which reads as the dedupe suffix", () => {
    expect(proposalSlug("Set the LDO to 3.3 V")).toBe("set-the-ldo-to-3v3");
    expect(proposalSlug("Replace R3 with 2.2k")).toBe("replace-r3-with-2k2");
    expect(proposalSlug("Space the pads 2.5 apart")).toBe("space-the-pads-2p5-apart");
    expect(proposalSlug("Board revision 3")).toBe("board-revision3");
    expect(proposalSlug("Change R1 and R2 to 3")).toBe("change-r1-and-r2-to3");
    expect(proposalSlug("!!!")).toBe("change");
  });
});
