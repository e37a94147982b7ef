/**
 * copperhead_check's answer: a report of thousands of findings cut to what a host can hold,
 * with every count, every new finding, the first few of each rule, and filters and pages that
 * together give back the whole list. (The same answer through the binary, on the largest
 * real board, is test/e2e/mcp-budget.test.ts.)
 */
import { describe, expect, test } from "bun:test";
import { countSeverities, describeCounts } from "../../src/checks/result.ts";
import type { CheckReport, Finding, Severity } from "../../src/checks/types.ts";
import { PER_RULE, SUMMARY_BUDGET, summariseCheck, type CheckSelection } from "../../src/mcp/check-summary.ts";

/** `n` DRC findings spread over a few rules, as a big board with history has them. */
function findings(n: number, baselineState?: Finding["baselineState"]): Finding[] {
  const rules: Array<[string, Severity]> = [
    ["lib_footprint_issues", "warning"],
    ["silk_overlap", "warning"],
    ["clearance", "error"],
    ["text_height", "info"],
  ];
  return Array.from({ length: n }, (_, i) => {
    const [rule, severity] = rules[i % rules.length]!;
    const ref = `U${i}`;
    return {
      check: "drc",
      rule,
      severity,
      message: `The footprint of ${ref} differs from its library, or overlaps silkscreen somewhere on F.Cu near pad 1 of ${ref}`,
      key: `drc:${rule}:${ref}`,
      location: { file: "hw/board.kicad_pcb", line: 1000 + i, ref, x: i, y: i },
      items: [`00000000-0000-0000-0000-${String(i).padStart(12, "0")}`],
      ...(baselineState ? { baselineState } : {}),
    };
  });
}

function report(list: Finding[], baseline = false): CheckReport {
  const counts = countSeverities(list);
  return {
    schema: "copperhead.check/1",
    ok: counts.error === 0,
    project: "hw/board.kicad_pro",
    kicad: { version: "9.0.0" },
    strict: false,
    fab: false,
    checks: [
      { id: "erc", status: "pass", summary: "no findings", findings: [] },
      { id: "drc", status: counts.error ? "fail" : "warn", summary: describeCounts(counts), findings: list },
    ],
    counts,
    ...(baseline
      ? {
          baseline: {
            ref: "HEAD",
            commit: "a".repeat(40),
            counts: { new: list.filter((f) => f.baselineState === "new").length, unchanged: 0, absent: 0 },
            absent: [],
          },
        }
      : {}),
  };
}

const size = (value: unknown) => JSON.stringify(value, null, 2).length;

describe("summariseCheck", () => {
  const big = report(findings(3000));

  test("by default: every count, the first few of each rule, within the budget", () => {
    expect(size(big)).toBeGreaterThan(10 * SUMMARY_BUDGET);
    const summary = summariseCheck(big);
    expect(size(summary)).toBeLessThanOrEqual(SUMMARY_BUDGET);
    expect(summary.counts).toEqual(big.counts);
    expect(summary.checks.find((c) => c.id === "drc")!.rules).toEqual([
      { rule: "clearance", severity: "error", count: 750 },
      { rule: "lib_footprint_issues", severity: "warning", count: 750 },
      { rule: "silk_overlap", severity: "warning", count: 750 },
      { rule: "text_height", severity: "info", count: 750 },
    ]);
    expect(summary.findings.map((f) => f.key)).toEqual(
      big.checks[1]!.findings.slice(0, 4 * PER_RULE).map((f) => f.key),
    );
    // The uuids kept for baseline matching are left out.
    expect(summary.findings.every((f) => f.items === undefined)).toBe(true);
    expect(summary.page).toEqual({ mode: "summary", selected: 4 * PER_RULE, offset: 0, returned: 4 * PER_RULE });
  });

  test("against a baseline: every new finding first, then the first few of each rule", () => {
    const unchanged = findings(20, "unchanged");
    const fresh = findings(8, "new").map((f) => ({ ...f, key: `${f.key}:new` }));
    const summary = summariseCheck(report([...unchanged, ...fresh], true));
    // The rules take turns, so the first twelve are each rule's first three.
    expect(summary.findings.map((f) => f.key)).toEqual([
      ...fresh.map((f) => f.key),
      ...unchanged.slice(0, 4 * PER_RULE).map((f) => f.key),
    ]);
    expect(summary.checks[1]!.rules.map((r) => [r.rule, r.count, r.new])).toEqual([
      ["clearance", 7, 2],
      ["lib_footprint_issues", 7, 2],
      ["silk_overlap", 7, 2],
      ["text_height", 7, 2],
    ]);
  });

  test("more new findings than fit: as many as fit, and where the next page starts", () => {
    const summary = summariseCheck(report(findings(3000, "new"), true));
    expect(size(summary)).toBeLessThanOrEqual(SUMMARY_BUDGET);
    expect(summary.page.selected).toBe(3000);
    expect(summary.page.next).toBe(summary.findings.length);
    expect(summary.findings.length).toBeGreaterThan(20);
  });

  test("filters select exactly what they name; pages put together are the whole selection", () => {
    const cases: Array<[CheckSelection, (f: Finding) => boolean]> = [
      [{ rule: "silk_overlap" }, (f) => f.rule === "silk_overlap"],
      [{ severity: "error" }, (f) => f.severity === "error"],
      [{ check: "erc" }, () => false],
      [{ check: "drc", severity: "info" }, (f) => f.severity === "info"],
    ];
    for (const [selection, expected] of cases) {
      const wanted = big.checks[1]!.findings.filter(expected).map((f) => f.key);
      const keys: string[] = [];
      let offset: number | undefined = 0;
      while (offset !== undefined) {
        const page = summariseCheck(big, { ...selection, offset });
        expect(size(page)).toBeLessThanOrEqual(SUMMARY_BUDGET);
        expect(page.page).toMatchObject({ mode: "filter", selected: wanted.length, offset });
        keys.push(...page.findings.map((f) => f.key));
        offset = page.page.next;
      }
      expect(keys).toEqual(wanted);
    }
  });

  test("limit caps a page, and offset continues it", () => {
    const first = summariseCheck(big, { rule: "clearance", limit: 5 });
    expect(first.findings.map((f) => f.key)).toEqual([
      "drc:clearance:U2",
      "drc:clearance:U6",
      "drc:clearance:U10",
      "drc:clearance:U14",
      "drc:clearance:U18",
    ]);
    expect(first.page).toEqual({ mode: "filter", selected: 750, offset: 0, returned: 5, next: 5 });
    const second = summariseCheck(big, { rule: "clearance", limit: 5, offset: first.page.next });
    expect(second.findings[0]!.key).toBe("drc:clearance:U22");
    const last = summariseCheck(big, { rule: "clearance", limit: 5, offset: 748 });
    expect(last.page).toEqual({ mode: "filter", selected: 750, offset: 748, returned: 2 });
  });
});
