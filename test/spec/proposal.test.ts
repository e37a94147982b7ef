import { describe, expect, test } from "bun:test";
import { parseProposal, renderProposal, type Proposal } from "../../src/spec/proposal.ts";

const proposal: Proposal = {
  id: "20261129-reverse-polarity",
  title: "Add reverse-polarity protection on VIN",
  approval: "auto",
  requirements: ["REQ-PWR-1", "REQ-PWR-2"],
  why: "A reversed barrel plug would destroy U1.\nA series Schottky costs 0.3 V.",
  changes: ["add D2 (Schottky) in series with VBUS", "record the decision"],
  verification: "ERC and DRC clean, parity clean, requirements unchanged.",
  runId: "r-0001",
};

describe("change proposals", () => {
  test("render and parse are inverses", () => {
    const markdown = renderProposal(proposal);
    expect(
      markdown.startsWith("# Add reverse-polarity protection on VIN\n\n- Change: 20261129-reverse-polarity\n"),
    ).toBe(true);
    expect(parseProposal(markdown)).toEqual({ problems: [], proposal });
  });

  test("no requirements touched is written and read as none", () => {
    const markdown = renderProposal({ ...proposal, requirements: [] });
    expect(markdown).toContain("- Requirements touched: none\n");
    expect(parseProposal(markdown).proposal?.requirements).toEqual([]);
  });

  test("the scope and the amendments are written and read back", () => {
    const amended: Proposal = {
      ...proposal,
      scope: { refs: ["J1"], nets: ["VIN"], newRefs: ["D2"], newNets: [] },
      amendments: [
        {
          why: "D2's cathode lands on the fuse F1, which must move.",
          changes: ["move F1 next to D2"],
          requirements: [],
          scope: { refs: ["F1"], nets: [], newRefs: [], newNets: ["/VIN_F"] },
        },
        {
          why: "The VIN test point must follow.",
          changes: [],
          requirements: ["REQ-PWR-2"],
          scope: { refs: ["TP1"], nets: [], newRefs: [], newNets: [] },
        },
      ],
    };
    const markdown = renderProposal(amended);
    expect(markdown).toContain("- Refs: J1\n- Nets: VIN\n- New refs: D2\n- New nets: none\n");
    expect(markdown).toContain(
      "## Amendments\n\n### Amendment 1\n\n- Refs: F1\n- Nets: none\n- New refs: none\n- New nets: /VIN_F\n- Requirements touched: none\n\nD2's cathode lands on the fuse F1, which must move.\n\n- move F1 next to D2\n\n### Amendment 2\n",
    );
    expect(parseProposal(markdown)).toEqual({ problems: [], proposal: amended });
  });

  test("an amendment without its names or its why is a problem", () => {
    const markdown = `${renderProposal(proposal)}## Amendments\n\n### Amendment 1\n\n- move F1\n`;
    expect(parseProposal(markdown).problems.map((p) => p.message)).toEqual([
      "an amendment needs its `- Refs:`, `- Nets:`, `- New refs:` and `- New nets:` lines",
      "an amendment needs its why",
    ]);
  });

  test("problems carry line numbers", () => {
    const markdown =
      "Brighter LED\n\n- Change: x\n- Approval: maybe\n- Requirements touched: LED-1\n\n## Why\n\n## Verification\n\nERC\n";
    const { proposal: parsed, problems } = parseProposal(markdown);
    expect(parsed).toBeUndefined();
    expect(problems).toEqual([
      { line: 1, message: "the first line must be the title: `# <title>`" },
      { line: 4, message: 'approval must be one of auto, interactive, not "maybe"' },
      { line: 5, message: '"LED-1" is not a requirement id (REQ-…)' },
      { line: 7, message: 'section "## Why" is missing or empty' },
      { line: 0, message: 'section "## Planned changes" is missing or empty' },
    ]);
  });
});
