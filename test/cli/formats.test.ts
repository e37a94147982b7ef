import { describe, expect, test } from "bun:test";
import Ajv04 from "ajv-draft-04";
import addFormats from "ajv-formats";
// Microsoft's SARIF SDK ships the SARIF 2.1.0 schema (draft-04, as published on SchemaStore);
// the package is a dev dependency only for this file.
import sarifSchema from "@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json" with { type: "json" };
import { reportAgainstBaseline } from "../../src/checks/baseline.ts";
import type { CheckReport, Finding } from "../../src/checks/types.ts";
import { renderGithub } from "../../src/cli/formats/github.ts";
import { REPORT_FORMATS, renderReport } from "../../src/cli/formats/index.ts";
import { renderJunit } from "../../src/cli/formats/junit.ts";
import { renderSarif } from "../../src/cli/formats/sarif.ts";
import { renderText } from "../../src/cli/formats/text.ts";
import { VERSION } from "../../src/version.ts";

const PCB = "hw/usb led/usb-led.kicad_pcb";

const clearance: Finding = {
  check: "drc",
  rule: "clearance",
  severity: "error",
  message: `Clearance violation (netclass 'Default' clearance 0.2 mm; actual 0.15 mm) <track> & "pad"`,
  key: "drc:clearance:U1.5|GND",
  location: { file: PCB, line: 120, ref: "U1", pin: "5", net: "GND", x: 101.6, y: 50.8 },
};
const short: Finding = {
  check: "drc",
  rule: "shorting_items",
  severity: "error",
  message: "Items shorting two nets\r\n100% of pad R1.1 overlaps: VBUS, +3V3 :: see F.Cu",
  key: "drc:shorting_items:R1.1",
  location: { file: PCB, line: 88, column: 5, ref: "R1", pin: "1" },
};
const silk: Finding = {
  check: "drc",
  rule: "silk_overlap",
  severity: "warning",
  message: "Silkscreen overlap on “J1” — 10 µF, Ω ✓",
  key: "drc:silk_overlap:J1",
  location: { file: PCB },
};
const unrouted: Finding = {
  check: "routing",
  rule: "unconnected_items",
  severity: "warning",
  message: "Missing connection between U1 pad 2 and C2 pad 2",
  key: "routing:unconnected_items:GND",
  location: { file: PCB, net: "GND", sheet: "/Regulator/" },
};
const stale: Finding = {
  check: "drift",
  rule: "stale_reference",
  severity: "error",
  message:
    "The document names `R9` in backticks, but no symbol or footprint in the design has that reference; rename it or drop the mention",
  key: "drift:stale_reference:docs/a,b:c.md:R9",
  location: { file: "docs/a,b:c.md", line: 12, ref: "R9" },
};
const note: Finding = {
  check: "requirements",
  rule: "R-004",
  severity: "info",
  message: "Tab\there, ESC \u001b[31mred, bell \u0007, 'quotes' %0A",
  key: "requirements:R-004",
};

const report: CheckReport = {
  schema: "copperhead.check/1",
  ok: false,
  project: "hw/usb led/usb-led.kicad_pro",
  kicad: { version: "9.0.8" },
  strict: false,
  fab: false,
  checks: [
    { id: "erc", status: "pass", summary: "no violations", findings: [] },
    { id: "drc", status: "fail", summary: "2 errors, 1 warning", findings: [clearance, short, silk] },
    { id: "parity", status: "pass", summary: "footprints match the schematic", findings: [] },
    { id: "routing", status: "warn", summary: "1 unconnected item", findings: [unrouted] },
    { id: "drift", status: "fail", summary: "1 error", findings: [stale] },
    { id: "requirements", status: "pass", summary: "3 rules hold", findings: [note] },
    { id: "changes", status: "pass", summary: "", findings: [] },
    { id: "fab", status: "skipped", summary: "run with --fab", findings: [] },
  ],
  counts: { error: 3, warning: 2, info: 1 },
};

const passing: CheckReport = {
  ...report,
  ok: true,
  kicad: null,
  strict: true,
  fab: true,
  checks: [
    { id: "erc", status: "pass", summary: "no violations", findings: [] },
    { id: "routing", status: "warn", summary: "1 unconnected item", findings: [unrouted] },
  ],
  counts: { error: 0, warning: 1, info: 0 },
};

const ESC = "\u001b";

describe("text", () => {
  const out = renderText(report, { color: false });
  const lines = out.split("\n");

  test("a header line per family, findings beneath, then the verdict", () => {
    expect(lines[0]).toBe("Checked hw/usb led/usb-led.kicad_pro with KiCad 9.0.8");
    expect(lines).toContain("✔ erc           pass     no violations");
    expect(lines).toContain("✖ drc           fail     2 errors, 1 warning");
    expect(lines).toContain("⚠ routing       warn     1 unconnected item");
    expect(lines).toContain("✔ changes       pass");
    expect(lines).toContain("– fab           skipped  run with --fab");
    expect(lines.at(-1)).toBe("check failed: 3 errors, 2 warnings, 1 note");
    const heads = lines.filter((l) => /^[✔✖⚠–] /.test(l)).map((l) => l.split(/ +/)[1]);
    expect(heads).toEqual(report.checks.map((c) => c.id));
  });

  test("findings show severity, message and location", () => {
    const at = lines.indexOf("✖ drc           fail     2 errors, 1 warning");
    expect(lines.slice(at + 1, at + 5)).toEqual([
      `    error    Clearance violation (netclass 'Default' clearance 0.2 mm; actual`,
      `             0.15 mm) <track> & "pad"`,
      "             hw/usb led/usb-led.kicad_pcb:120 · U1 pin 5 · net GND",
      "             at (101.6, 50.8) · rule clearance",
    ]);
    expect(lines.slice(at + 5, at + 8)).toEqual([
      "    error    Items shorting two nets",
      "             100% of pad R1.1 overlaps: VBUS, +3V3 :: see F.Cu",
      "             hw/usb led/usb-led.kicad_pcb:88:5 · R1 pin 1 · rule shorting_items",
    ]);
    expect(lines).toContain("    warning  Silkscreen overlap on “J1” — 10 µF, Ω ✓");
    expect(lines).toContain("             rule R-004");
  });

  test("fits an 80-column terminal, wrapping messages and locations", () => {
    for (const line of lines) expect(Bun.stringWidth(line)).toBeLessThanOrEqual(80);
    expect(lines).toContain("    error    The document names `R9` in backticks, but no symbol or footprint in");
    expect(lines).toContain("             the design has that reference; rename it or drop the mention");
    expect(lines).toContain("             hw/usb led/usb-led.kicad_pcb · net GND · sheet /Regulator/");
  });

  test("control characters in messages are shown, never sent to the terminal", () => {
    expect(out).not.toContain(ESC);
    expect(out).not.toContain("\u0007");
    expect(out).not.toContain("\r");
    expect(lines).toContain("    info     Tab  here, ESC \\u001b[31mred, bell \\u0007, 'quotes' %0A");
  });

  test("colour only when asked, and it changes nothing else", () => {
    const coloured = renderText(report, { color: true });
    expect(coloured).toContain(`${ESC}[`);
    expect(Bun.stripANSI(coloured)).toBe(out);
  });

  test("a passing report with flags and no KiCad", () => {
    const text = renderText(passing, { color: false }).split("\n");
    expect(text[0]).toBe("Checked hw/usb led/usb-led.kicad_pro (strict, fab)");
    expect(text.at(-1)).toBe("check passed: 1 warning");
  });
});

describe("github", () => {
  test("one workflow command per finding, escaped per the runner's rules", () => {
    expect(renderGithub(report).split("\n")).toEqual([
      `::error file=hw/usb led/usb-led.kicad_pcb,line=120,title=drc/clearance::Clearance violation (netclass 'Default' clearance 0.2 mm; actual 0.15 mm) <track> & "pad"`,
      "::error file=hw/usb led/usb-led.kicad_pcb,line=88,col=5,title=drc/shorting_items::Items shorting two nets%0D%0A100%25 of pad R1.1 overlaps: VBUS, +3V3 :: see F.Cu",
      "::warning file=hw/usb led/usb-led.kicad_pcb,title=drc/silk_overlap::Silkscreen overlap on “J1” — 10 µF, Ω ✓",
      "::warning file=hw/usb led/usb-led.kicad_pcb,title=routing/unconnected_items::Missing connection between U1 pad 2 and C2 pad 2",
      "::error file=docs/a%2Cb%3Ac.md,line=12,title=drift/stale_reference::The document names `R9` in backticks, but no symbol or footprint in the design has that reference; rename it or drop the mention",
      "::notice title=requirements/R-004::Tab\there, ESC \u001b[31mred, bell \u0007, 'quotes' %250A",
    ]);
  });

  test("properties escape their own delimiters", () => {
    const odd: Finding = { ...note, rule: "R:1,2", location: { file: "a%b.md" } };
    expect(
      renderGithub({ ...passing, checks: [{ id: "requirements", status: "pass", summary: "", findings: [odd] }] }),
    ).toBe(
      "::notice file=a%25b.md,title=requirements/R%3A1%2C2::Tab\there, ESC \u001b[31mred, bell \u0007, 'quotes' %250A",
    );
  });

  test("nothing at all when there are no findings", () => {
    expect(renderGithub({ ...passing, checks: [passing.checks[0]!] })).toBe("");
  });
});

describe("sarif", () => {
  const log = JSON.parse(renderSarif(report, { version: "1.2.3", informationUri: "https://example.org/copperhead" }));
  const run = log.runs[0];

  test("validates against the SARIF 2.1.0 schema", () => {
    const ajv = new Ajv04({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats(ajv);
    const validate = ajv.compile(sarifSchema);
    for (const candidate of [log, JSON.parse(renderSarif(passing, { version: VERSION }))]) {
      const ok = validate(candidate);
      expect(validate.errors ?? []).toEqual([]);
      expect(ok).toBe(true);
    }
    // The validator is live: a wrong level is rejected.
    const broken = structuredClone(log);
    broken.runs[0].results[0].level = "fatal";
    expect(validate(broken)).toBe(false);
  });

  test("driver, one rule per check/rule in stable order", () => {
    expect(log.version).toBe("2.1.0");
    expect(log.runs).toHaveLength(1);
    expect(run.tool.driver).toMatchObject({
      name: "copperhead",
      version: "1.2.3",
      informationUri: "https://example.org/copperhead",
    });
    expect(run.tool.driver.rules.map((r: { id: string }) => r.id)).toEqual([
      "drc/clearance",
      "drc/shorting_items",
      "drc/silk_overlap",
      "drift/stale_reference",
      "requirements/R-004",
      "routing/unconnected_items",
    ]);
  });

  test("results carry level, message, repo-relative location and the key as fingerprint", () => {
    const results = run.results;
    expect(results.map((r: { level: string }) => r.level)).toEqual([
      "error",
      "error",
      "warning",
      "warning",
      "error",
      "note",
    ]);
    for (const r of results) expect(run.tool.driver.rules[r.ruleIndex].id).toBe(r.ruleId);
    expect(results[1]).toMatchObject({
      ruleId: "drc/shorting_items",
      message: { text: short.message },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: "hw/usb%20led/usb-led.kicad_pcb", uriBaseId: "%SRCROOT%" },
            region: { startLine: 88, startColumn: 5 },
          },
        },
      ],
      partialFingerprints: { "copperheadKey/v1": "drc:shorting_items:R1.1" },
      properties: { ref: "R1", pin: "1" },
    });
    expect(results[2].locations[0].physicalLocation.region).toBeUndefined();
    expect(results[4].locations[0].physicalLocation.artifactLocation.uri).toBe("docs/a%2Cb%3Ac.md");
    // A finding with no location is pinned to the project file.
    expect(results[5].locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: "hw/usb%20led/usb-led.kicad_pro", uriBaseId: "%SRCROOT%" },
    });
    expect(results[5].properties).toBeUndefined();
  });

  test("deterministic: the same report gives the same bytes", () => {
    expect(renderSarif(structuredClone(report), { version: "1.2.3" })).toBe(renderSarif(report, { version: "1.2.3" }));
  });
});

describe("junit", () => {
  const xml = renderJunit(report);
  const doc = parseXml(xml);

  test("is well-formed XML with one suite per family and right counts", () => {
    expect(doc.name).toBe("testsuites");
    expect(doc.attrs).toMatchObject({ tests: "10", failures: "3", errors: "0", skipped: "1" });
    const suites = doc.children;
    expect(suites.map((s) => s.attrs.name)).toEqual(report.checks.map((c) => c.id));
    expect(suites.map((s) => [s.attrs.tests, s.attrs.failures, s.attrs.skipped])).toEqual([
      ["1", "0", "0"],
      ["3", "2", "0"],
      ["1", "0", "0"],
      ["1", "0", "0"],
      ["1", "1", "0"],
      ["1", "0", "0"],
      ["1", "0", "0"],
      ["1", "0", "1"],
    ]);
    for (const suite of suites) {
      const cases = suite.children.filter((c) => c.name === "testcase");
      expect(String(cases.length)).toBe(suite.attrs.tests!);
      expect(String(cases.filter((c) => c.children.some((k) => k.name === "failure")).length)).toBe(
        suite.attrs.failures!,
      );
      expect(String(cases.filter((c) => c.children.some((k) => k.name === "skipped")).length)).toBe(
        suite.attrs.skipped!,
      );
    }
  });

  test("passing and skipped families, errors as failures, warnings as output", () => {
    const [erc, drc, , routing, , requirements, , fab] = doc.children;
    expect(testcases(erc!)).toEqual([
      { name: "testcase", attrs: { name: "erc", classname: "copperhead.erc" }, text: "", children: [] },
    ]);
    expect(testcases(fab!)[0]!.children).toEqual([
      { name: "skipped", attrs: { message: "run with --fab" }, text: "", children: [] },
    ]);
    const [c1, c2, c3] = testcases(drc!);
    expect(c1!.attrs).toEqual({ name: clearance.key, classname: "copperhead.drc", file: PCB, line: "120" });
    expect(c1!.children[0]!).toMatchObject({
      name: "failure",
      attrs: { message: clearance.message, type: "drc/clearance" },
    });
    expect(c1!.children[0]!.text).toBe(
      `error: ${clearance.message}\n${PCB}:120 · U1 pin 5 · net GND · at (101.6, 50.8)\nrule drc/clearance`,
    );
    // Attribute and text escaping round-trip CR, LF, `%`, `::` and commas exactly.
    expect(c2!.children[0]!.attrs.message).toBe(short.message);
    expect(c2!.children[0]!.text.startsWith(`error: ${short.message}\n`)).toBe(true);
    expect(c3!.children[0]!).toMatchObject({
      name: "system-out",
      text: `warning: ${silk.message}\n${PCB}\nrule drc/silk_overlap`,
    });
    expect(testcases(routing!)[0]!.children[0]!.name).toBe("system-out");
    // Control characters XML cannot carry are spelled out; tabs and quotes survive.
    expect(testcases(requirements!)[0]!.children[0]!.text).toBe(
      "info: Tab\there, ESC \\u001b[31mred, bell \\u0007, 'quotes' %0A\nrule requirements/R-004",
    );
  });

  test("characters XML 1.0 cannot carry at all are spelled out, in text and attributes", () => {
    const nasty: Finding = { ...silk, severity: "error", message: "nul \u0000 lone \uD800 nonchar \uFFFF ok 𝛀" };
    const xml = renderJunit({ ...passing, checks: [{ id: "drc", status: "fail", summary: "", findings: [nasty] }] });
    const failure = testcases(parseXml(xml).children[0]!)[0]!.children[0]!;
    const spelled = "nul \\u0000 lone \\ud800 nonchar \\uffff ok 𝛀";
    expect(failure.attrs.message).toBe(spelled);
    expect(failure.text.startsWith(`error: ${spelled}\n`)).toBe(true);
  });

  test("suite properties carry status and summary", () => {
    const props = doc.children[1]!.children.find((c) => c.name === "properties")!;
    expect(props.children.map((p) => [p.attrs.name, p.attrs.value])).toEqual([
      ["status", "fail"],
      ["summary", "2 errors, 1 warning"],
    ]);
  });

  test("under --strict warnings fail too, and a failed family always shows a failure", () => {
    const strict = parseXml(
      renderJunit({
        ...report,
        strict: true,
        checks: [
          { id: "routing", status: "fail", summary: "1 unconnected item", findings: [unrouted] },
          { id: "erc", status: "fail", summary: "ERC could not agree with itself", findings: [] },
        ],
      }),
    );
    expect(strict.attrs).toMatchObject({ tests: "2", failures: "2" });
    expect(testcases(strict.children[0]!)[0]!.children[0]!.name).toBe("failure");
    expect(testcases(strict.children[1]!)[0]!).toMatchObject({
      attrs: { name: "erc" },
      children: [{ name: "failure", attrs: { message: "ERC could not agree with itself", type: "erc" } }],
    });
  });
});

describe("renderReport", () => {
  test("knows every format", () => {
    for (const format of REPORT_FORMATS)
      expect(renderReport(report, format, { color: false }).length).toBeGreaterThan(0);
  });

  test("json is exactly the report", () => {
    expect(renderReport(report, "json", { color: true })).toBe(JSON.stringify(report, null, 2));
  });

  test("colour reaches the text format only", () => {
    expect(renderReport(report, "text", { color: true })).toContain(`${ESC}[`);
    expect(renderReport(report, "text", { color: false })).toBe(renderText(report, { color: false }));
    expect(renderReport(report, "junit", { color: true })).toBe(renderJunit(report));
  });

  test("sarif names this copperhead version", () => {
    expect(JSON.parse(renderReport(report, "sarif", { color: false })).runs[0].tool.driver.version).toBe(VERSION);
  });
});

interface XmlNode {
  name: string;
  attrs: Record<string, string>;
  text: string;
  children: XmlNode[];
}

function testcases(suite: XmlNode): XmlNode[] {
  return suite.children.filter((c) => c.name === "testcase");
}

/**
 * Parses with Python's expat, a conforming XML 1.0 parser that rejects what lenient JS parsers
 * accept (control characters, `<` in attributes, undefined entities). Python is on every
 * copperhead machine because KiCad's `pcbnew` module lives there; if it is missing this fails.
 */
function parseXml(xml: string): XmlNode {
  const script = `
import json, sys, xml.dom.minidom as m
def node(e):
    kids = [c for c in e.childNodes if c.nodeType == c.ELEMENT_NODE]
    text = "".join(c.data for c in e.childNodes if c.nodeType == c.TEXT_NODE) if not kids else ""
    return {"name": e.tagName, "attrs": dict(e.attributes.items()), "text": text, "children": [node(c) for c in kids]}
print(json.dumps(node(m.parseString(sys.stdin.buffer.read()).documentElement)))
`;
  const proc = Bun.spawnSync(["python3", "-c", script], { stdin: Buffer.from(xml) });
  if (proc.exitCode !== 0) throw new Error(`not well-formed XML:\n${proc.stderr.toString()}`);
  return JSON.parse(proc.stdout.toString());
}

describe("against a baseline", () => {
  // HEAD had the clearance error, the silk warning and a parity warning since fixed; the short is new.
  const fixed: Finding = {
    check: "parity",
    rule: "footprint_symbol_mismatch",
    severity: "warning",
    message: "R2 value differs",
    key: "parity:footprint_symbol_mismatch:R2:value",
  };
  const baselineOf = (head: Finding[]): CheckReport => ({
    ...report,
    checks: [
      { id: "drc", status: "fail", summary: "", findings: head },
      { id: "parity", status: "warn", summary: "", findings: [fixed] },
    ],
  });
  const judged = reportAgainstBaseline(report, baselineOf([clearance, silk, unrouted, note]), {
    ref: "main",
    commit: "a".repeat(40),
  });
  const state = (key: string) => judged.checks.flatMap((c) => c.findings).find((f) => f.key === key)?.baselineState;

  test("every finding is new or unchanged, the fixed ones are absent, and ok means nothing new fails", () => {
    expect(state(short.key)).toBe("new");
    expect(state(clearance.key)).toBe("unchanged");
    expect(state(stale.key)).toBe("new");
    expect(judged.baseline).toEqual({
      ref: "main",
      commit: "a".repeat(40),
      counts: { new: 2, unchanged: 4, absent: 1 },
      absent: [{ ...fixed, baselineState: "absent" }],
    });
    expect(judged.ok).toBe(false);
    const onlyOld = reportAgainstBaseline(report, report, { ref: "main", commit: "a".repeat(40) });
    expect(onlyOld.ok).toBe(true);
    expect(onlyOld.checks.find((c) => c.id === "drc")!.status).toBe("fail");
  });

  test("with strict, a new warning fails too; an unchanged one does not", () => {
    const strict = {
      ...report,
      strict: true,
      checks: report.checks.map((c) => ({ ...c, findings: c.findings.filter((f) => f.severity !== "error") })),
    };
    expect(reportAgainstBaseline(strict, baselineOf([silk]), { ref: "HEAD", commit: "b".repeat(40) }).ok).toBe(false);
    expect(reportAgainstBaseline(strict, strict, { ref: "HEAD", commit: "b".repeat(40) }).ok).toBe(true);
  });

  test("SARIF: baselineState on every result, absent findings included, valid 2.1.0", () => {
    const log = JSON.parse(renderSarif(judged, { version: "1.2.3" }));
    const ajv = new Ajv04({ allErrors: true, strict: false, unicodeRegExp: false });
    addFormats(ajv);
    const validate = ajv.compile(sarifSchema);
    expect(validate(log), JSON.stringify(validate.errors)).toBe(true);
    const states = Object.fromEntries(
      log.runs[0].results.map((r: { partialFingerprints: Record<string, string>; baselineState: string }) => [
        r.partialFingerprints["copperheadKey/v1"],
        r.baselineState,
      ]),
    );
    expect(states).toEqual({
      [clearance.key]: "unchanged",
      [short.key]: "new",
      [silk.key]: "unchanged",
      [unrouted.key]: "unchanged",
      [stale.key]: "new",
      [note.key]: "unchanged",
      [fixed.key]: "absent",
    });
    expect(log.runs[0].properties.baseline).toEqual({ ref: "main", commit: "a".repeat(40) });
    // Without a baseline, no result claims a state.
    expect(
      JSON.parse(renderSarif(report, { version: "1.2.3" })).runs[0].results.every(
        (r: object) => !("baselineState" in r),
      ),
    ).toBe(true);
  });

  test("github: annotations for new findings only", () => {
    const lines = renderGithub(judged).split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toStartWith("::error file=hw/usb led/usb-led.kicad_pcb,line=88");
    expect(lines.join("\n")).toContain("shorting");
    expect(lines.join("\n")).toContain("R9");
    expect(renderGithub(reportAgainstBaseline(report, report, { ref: "main", commit: "a".repeat(40) }))).toBe("");
  });

  test("junit: only new errors are failures; unchanged ones say so", () => {
    const xml = renderJunit(judged);
    expect(xml).toContain(`<testsuites name="copperhead check" tests="10" failures="2"`);
    expect(xml).toMatch(/name="drc:clearance:U1\.5\|GND"[^>]*>\s*<system-out>[^<]*unchanged since main/);
    expect(xml).toMatch(/name="drc:shorting_items:R1\.1"[^>]*>\s*<failure/);
  });

  test("text: new findings listed, unchanged ones counted, the fixed ones shown, and the verdict says what is new", () => {
    const text = renderText(judged, { color: false });
    expect(text.split("\n")[0]).toBe(
      `Checked hw/usb led/usb-led.kicad_pro with KiCad 9.0.8 against main (aaaaaaaaaaaa)`,
    );
    expect(text).toContain("Items shorting two nets");
    expect(text).not.toContain("Clearance violation");
    expect(text).toContain("    2 unchanged since main");
    expect(text).toContain("Gone since main:\n    warning  R2 value differs");
    expect(text.split("\n").at(-1)).toBe(
      "check failed: new since main: 2 errors; unchanged: 1 error, 2 warnings, 1 note; 1 gone",
    );
  });
});

describe("text on a board with history", () => {
  /** `n` findings of `rule` in `check`, numbered so each is its own. */
  const many = (check: Finding["check"], rule: string, severity: Finding["severity"], n: number): Finding[] =>
    Array.from({ length: n }, (_, i) => ({
      check,
      rule,
      severity,
      message: `${rule} number ${i + 1}`,
      key: `${check}:${rule}:${i + 1}`,
      location: { file: PCB },
    }));
  const erc = [
    ...many("erc", "pin_not_connected", "error", 40),
    ...many("erc", "lib_symbol_issues", "warning", 25),
    ...many("erc", "label_dangling", "warning", 2),
  ];
  const noisy: CheckReport = {
    ...report,
    checks: [
      { id: "erc", status: "fail", summary: "40 errors, 27 warnings", findings: erc },
      ...report.checks.slice(1),
    ],
    counts: { error: 43, warning: 29, info: 1 },
  };

  test("a long family shows its counts by rule and the first few of each; one line says how to see everything", () => {
    const text = renderText(noisy, { color: false });
    expect(text).toContain("    pin_not_connected: 40 errors\n");
    expect(text).toContain("    lib_symbol_issues: 25 warnings\n");
    expect(text).toContain("    label_dangling: 2 warnings\n");
    for (const n of [1, 2, 3]) expect(text).toContain(`pin_not_connected number ${n}\n`);
    expect(text).not.toContain("pin_not_connected number 4\n");
    expect(text).toContain("… and 37 more pin_not_connected");
    expect(text).toContain("… and 22 more lib_symbol_issues");
    expect(text).not.toContain("more label_dangling");
    expect(text.trimEnd().split("\n").at(-3)).toBe(
      "Long families show the first 3 findings of each rule: --all lists every finding, --format json gives them all as data.",
    );
    // Short families read as before: every finding listed, no rule lines.
    expect(text).not.toContain("    clearance: ");
    for (const f of [silk, unrouted]) expect(text).toContain(f.message);
    expect(text).toContain("Items shorting two nets");
    expect(text.split("\n").length).toBeLessThan(80);
  });

  test("--all lists every finding; a short report has no closing hint", () => {
    const all = renderText(noisy, { color: false, all: true });
    for (const f of erc) expect(all).toContain(`${f.message}\n`);
    expect(all).not.toContain("more pin_not_connected");
    expect(all).not.toContain("--all lists");
    expect(renderText(report, { color: false })).not.toContain("--all");
  });

  test("against a baseline, new findings are listed in full however many, the unchanged counted", () => {
    const head = {
      ...noisy,
      checks: noisy.checks.map((c) => ({ ...c, findings: c.findings.filter((f) => f.rule !== "pin_not_connected") })),
    };
    const judged = reportAgainstBaseline(noisy, head, { ref: "main", commit: "a".repeat(40) });
    const text = renderText(judged, { color: false });
    for (const f of erc.filter((f) => f.rule === "pin_not_connected")) expect(text).toContain(`${f.message}\n`);
    expect(text).toContain("    27 unchanged since main");
    expect(text).not.toContain("lib_symbol_issues number 1\n");
    expect(text).toContain("Unchanged findings are counted: --all lists them");
    const all = renderText(judged, { color: false, all: true });
    expect(all).toContain("lib_symbol_issues number 25\n");
  });
});

describe("missing libraries against a baseline", () => {
  /** KiCad's own wording for a part whose library is in no table. */
  const missing = (check: "erc" | "drc", rule: string, kind: string, library: string, ref: string): Finding => ({
    check,
    rule,
    severity: "warning",
    message: `The current configuration does not include the ${kind} library '${library}': ${check === "erc" ? "Symbol" : "Footprint"} ${ref}`,
    key: `${check}:${rule}:${ref}`,
    location: { file: check === "erc" ? "hw/board.kicad_sch" : PCB },
  });
  const before = [
    missing("erc", "lib_symbol_issues", "symbol", "Vendor", "U1"),
    missing("erc", "lib_symbol_issues", "symbol", "Vendor", "U2"),
    missing("drc", "lib_footprint_issues", "footprint", "Vendor-FP", "U1"),
  ];
  // A part added from the missing symbol library, which is no new problem (the library was
  // missing already: adding it to the tables clears all three), and one from another missing
  // library, which is.
  const after = [
    ...before,
    missing("erc", "lib_symbol_issues", "symbol", "Vendor", "U3"),
    missing("erc", "lib_symbol_issues", "symbol", "Other", "U4"),
  ];
  const withFindings = (list: Finding[]): CheckReport => ({
    ...report,
    checks: [
      { id: "erc", status: "warn", summary: "", findings: list.filter((f) => f.check === "erc") },
      { id: "drc", status: "warn", summary: "", findings: list.filter((f) => f.check === "drc") },
    ],
    counts: { error: 0, warning: list.length, info: 0 },
  });
  const judged = reportAgainstBaseline(withFindings(after), withFindings(before), {
    ref: "main",
    commit: "a".repeat(40),
  });

  test("text: each library once, with what it explains and how many of those are new", () => {
    const text = renderText(judged, { color: false });
    expect(text).toContain(
      "    warning  symbol library Other: 1 symbol (1 new)\n    warning  symbol library Vendor: 3 symbols\n    warning  footprint library Vendor-FP: 1 footprint\n",
    );
    expect(text).not.toContain("does not include");
    expect(text).toContain("    4 about missing libraries, above");
  });

  test("github annotates the libraries with something new; sarif has one result per library, in its state", () => {
    const annotations = renderGithub(judged).split("\n");
    expect(annotations.map((a) => a.split("::")[2]!.split(" is in")[0])).toEqual(['symbol library "Other"']);
    const results = JSON.parse(renderSarif(judged, { version: VERSION })).runs[0].results as Array<{
      ruleId: string;
      baselineState: string;
      partialFingerprints: Record<string, string>;
    }>;
    expect(results.map((r) => [r.ruleId, r.baselineState, r.partialFingerprints["copperheadKey/v1"]])).toEqual([
      ["erc/missing_library", "new", "erc:missing_library:symbol:Other"],
      ["erc/missing_library", "unchanged", "erc:missing_library:symbol:Vendor"],
      ["drc/missing_library", "unchanged", "drc:missing_library:footprint:Vendor-FP"],
    ]);
    // The JSON keeps each of kicad-cli's findings.
    expect(JSON.parse(renderReport(judged, "json", { color: false })).checks[0].findings.length).toBe(4);
  });
});
