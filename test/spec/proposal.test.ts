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
    expect(markdown.startsWith("# Add reverse-polarity protection on VIN\n\n- Change: 20261129-reverse-polarity\n")).toBe(true);
    expect(parseProposal(markdown)).toEqual({ problems: [], proposal });
  });

  test("no requirements touched is written and read as none", () => {
    const markdown = renderProposal({ ...proposal, requirements: [] });
    expect(markdown).toContain("- Requirements touched: none\n");
    expect(parseProposal(markdown).proposal?.requirements).toEqual([]);
  });

  test("problems carry line numbers", () => {
    const markdown = "Brighter LED\n\n- Change: x\n- Approval: maybe\n- Requirements touched: LED-1\n\n## Why\n\n## Verification\n\nERC\n";
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
