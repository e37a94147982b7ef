import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  child,
  children,
  childText,
  flag,
  head,
  insertChild,
  list,
  num,
  parseSexpr,
  printSexpr,
  q,
  removeChild,
  setAtom,
  setChildValue,
  SexprError,
  text,
  walk,
} from "../../src/kicad/sexpr.ts";

const KICAD_EXTENSIONS = "{kicad_sch,kicad_pcb,kicad_sym,kicad_mod,kicad_wks}";
const fixtureFiles = [
  ...new Bun.Glob(`fixtures/**/*.${KICAD_EXTENSIONS}`).scanSync("."),
  ...new Bun.Glob("fixtures/**/{sym-lib-table,fp-lib-table}").scanSync("."),
].sort();

describe("round trip", () => {
  test("the repo has KiCad fixtures to round-trip", () => {
    expect(fixtureFiles.length).toBeGreaterThan(0);
  });

  for (const file of fixtureFiles) {
    test(`byte-identical: ${file}`, () => {
      const source = readFileSync(file, "utf8");
      expect(printSexpr(parseSexpr(source, { file }))).toBe(source);
    });
  }

  const samples: Record<string, string> = {
    "tabs and newlines": "(kicad_sch\n\t(version 20250114)\n\t(uuid \"a\")\n)\n",
    spaces: "(a  (b   c)\n    (d))",
    crlf: "(a\r\n\t(b \"x\")\r\n)\r\n",
    "escaped quotes and backslashes": '(a "say \\"hi\\"" "C:\\\\dir" "line\\nbreak")',
    unicode: '(property "Beschreibung" "Widerstand 4,7 kΩ ±1% — 日本語 🚀")',
    numbers: "(at -1.27 +2.54 1e-3 -4.5E+2 0x1f .5 -.25)",
    "bare symbols": "(pin passive line (hide yes) yes no F.Cu *.Cu)",
    "empty lists": "(a () (()) ( ))",
    "leading and trailing text": "\n\n  (a b)  \n\n",
    "no trailing newline": "(a)",
    "atom with inner quote": '(a b"c)',
  };
  for (const [name, source] of Object.entries(samples)) {
    test(name, () => {
      expect(printSexpr(parseSexpr(source))).toBe(source);
    });
  }

  test("100,000 levels of nesting parse and print without a stack overflow", () => {
    const depth = 100_000;
    const source = "(".repeat(depth) + "x" + ")".repeat(depth) + "\n";
    const doc = parseSexpr(source);
    expect(printSexpr(doc)).toBe(source);
    let levels = 0;
    walk(doc.root, () => {
      levels++;
    });
    expect(levels).toBe(depth);
  });
});

describe("malformed input gives a typed SexprError with line and column", () => {
  const cases: { name: string; source: string; line: number; column: number; reason: RegExp }[] = [
    { name: "empty file", source: "", line: 1, column: 1, reason: /empty/ },
    { name: "whitespace only", source: "\n\t \n", line: 3, column: 1, reason: /empty/ },
    { name: "bare atom", source: "hello", line: 1, column: 1, reason: /expected '\('/ },
    { name: "quoted string at top level", source: '"x"', line: 1, column: 1, reason: /expected '\('/ },
    { name: "lone close paren", source: ")", line: 1, column: 1, reason: /no open list/ },
    { name: "only an open paren", source: "(", line: 1, column: 2, reason: /still open/ },
    { name: "unclosed list", source: "(a (b c)\n", line: 2, column: 1, reason: /1 list\(s\) still open .*line 1, column 1/ },
    { name: "two unclosed lists", source: "((a", line: 1, column: 4, reason: /2 list\(s\) still open/ },
    { name: "extra close paren", source: "(a))", line: 1, column: 4, reason: /no open list/ },
    { name: "extra close after nested", source: "(a\n\t(b)\n)\n)", line: 4, column: 1, reason: /no open list/ },
    { name: "two roots", source: "(a)\n(b)", line: 2, column: 1, reason: /after the root list/ },
    { name: "junk after root", source: "(a) junk", line: 1, column: 5, reason: /after the root list/ },
    { name: "unterminated string", source: '(a "unterminated', line: 1, column: 4, reason: /unterminated string/ },
    { name: "string ending in a backslash", source: '(a "x\\', line: 1, column: 4, reason: /unterminated string/ },
    { name: "escaped quote never closed", source: '(a "x\\")', line: 1, column: 4, reason: /unterminated string/ },
    { name: "text glued to a string", source: '(a "x"y)', line: 1, column: 7, reason: /after a string/ },
    { name: "NUL byte", source: "(a \u0000)", line: 1, column: 4, reason: /U\+0000/ },
    { name: "control character inside an atom", source: "(ab\u0007c)", line: 1, column: 4, reason: /U\+0007/ },
    { name: "binary garbage", source: "(\u0001\u0002\u0003)", line: 1, column: 2, reason: /control character/ },
    { name: "CRLF line counting", source: "(a\r\n(b\r\n", line: 3, column: 1, reason: /still open/ },
    { name: "unicode before the error", source: "(Ω ü\n日本 ))", line: 2, column: 5, reason: /no open list/ },
    { name: "100,000 unclosed levels", source: "(".repeat(100_000), line: 1, column: 100_001, reason: /100000 list\(s\) still open/ },
    {
      name: "truncated KiCad schematic",
      source: '(kicad_sch\n\t(version 20250114)\n\t(generator "eeschema")\n\t(symbol\n\t\t(lib_id "Dev',
      line: 5,
      column: 11,
      reason: /unterminated string/,
    },
  ];

  test("there are at least 20 malformed cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  for (const c of cases) {
    test(c.name, () => {
      let caught: unknown;
      try {
        parseSexpr(c.source, { file: "board.kicad_pcb" });
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(SexprError);
      const err = caught as SexprError;
      expect(err.code).toBe("parse_error");
      expect(err.message).toMatch(c.reason);
      expect({ line: err.line, column: err.column }).toEqual({ line: c.line, column: c.column });
      expect(err.message.startsWith(`board.kicad_pcb:${c.line}:${c.column}: `)).toBe(true);
      expect(err.toJSON().error).toMatchObject({ code: "parse_error", file: "board.kicad_pcb", line: c.line, column: c.column });
    });
  }
});

describe("reading", () => {
  const doc = parseSexpr(
    '(symbol\n\t(lib_id "Device:R")\n\t(at 100.33 -50.8 90)\n\t(in_bom yes)\n\t(dnp no)\n\t(property "Value" "4k7\\"")\n\t(property "Footprint" "R_0603")\n\thide\n)',
  );
  const root = doc.root;

  test("head, child, children and text", () => {
    expect(head(root)).toBe("symbol");
    expect(childText(root, "lib_id")).toBe("Device:R");
    expect(children(root, "property").map((p) => text(p, 2))).toEqual(['4k7"', "R_0603"]);
    expect(child(root, "nope")).toBeUndefined();
  });

  test("numbers", () => {
    const at = child(root, "at")!;
    expect([num(at, 1), num(at, 2), num(at, 3), num(at, 4)]).toEqual([100.33, -50.8, 90, undefined]);
  });

  test("flags: yes/no lists and bare atoms", () => {
    expect(flag(root, "in_bom")).toBe(true);
    expect(flag(root, "dnp")).toBe(false);
    expect(flag(root, "hide")).toBe(true);
    expect(flag(root, "on_board")).toBeUndefined();
  });
});

describe("editing", () => {
  const source = "(kicad_sch\n\t(version 20250114)\n\t(wire\n\t\t(pts\n\t\t\t(xy 1 2) (xy 3 4)\n\t\t)\n\t)\n)\n";

  test("setAtom changes only that token", () => {
    const doc = parseSexpr(source);
    const xy = child(child(child(doc.root, "wire")!, "pts")!, "xy")!;
    setAtom(xy, 1, 10.5);
    expect(printSexpr(doc)).toBe(source.replace("(xy 1 2)", "(xy 10.5 2)"));
  });

  test("inserted nodes are laid out as KiCad 9 writes them", () => {
    const doc = parseSexpr(source);
    insertChild(
      doc.root,
      list(
        "symbol",
        list("lib_id", q("Device:R")),
        list("at", 100, 50.8, 0),
        list("property", q("Reference"), q("R1"), list("at", 101.6, 49.53, 0), list("effects", list("font", list("size", 1.27, 1.27)))),
      ),
    );
    expect(printSexpr(doc)).toBe(
      source.replace(
        "\t)\n)\n",
        [
          "\t)",
          "\t(symbol",
          '\t\t(lib_id "Device:R")',
          "\t\t(at 100 50.8 0)",
          '\t\t(property "Reference" "R1"',
          "\t\t\t(at 101.6 49.53 0)",
          "\t\t\t(effects",
          "\t\t\t\t(font",
          "\t\t\t\t\t(size 1.27 1.27)",
          "\t\t\t\t)",
          "\t\t\t)",
          "\t\t)",
          "\t)",
          ")",
          "",
        ].join("\n"),
      ),
    );
  });

  test("xy runs are packed on one line up to column 99", () => {
    const doc = parseSexpr("(kicad_pcb\n)\n");
    const pts = list("pts");
    for (let k = 0; k < 8; k++) insertChild(pts, list("xy", 100.123 + k, 200.456));
    insertChild(doc.root, list("gr_poly", pts));
    const lines = printSexpr(doc).split("\n");
    const xyLines = lines.filter((l) => l.includes("(xy"));
    expect(xyLines.length).toBe(2);
    expect(xyLines[0]!.startsWith("\t\t\t(xy 100.123 200.456) (xy 101.123 200.456)")).toBe(true);
  });

  test("long runs of atoms wrap past column 72", () => {
    const doc = parseSexpr("(a\n)\n");
    insertChild(doc.root, list("data", ...Array.from({ length: 20 }, (_, k) => q(`chunk${k}`))));
    const printed = printSexpr(doc);
    expect(printed.split("\n").length).toBeGreaterThan(4);
    expect(printed.endsWith("\n\t)\n)\n")).toBe(true);
    expect(printSexpr(parseSexpr(printed))).toBe(printed);
  });

  test("setChildValue updates in place or appends", () => {
    const doc = parseSexpr('(property "Value" "1k"\n\t(at 1 2 0)\n)');
    setChildValue(doc.root, "at", 3, 4, 90);
    expect(printSexpr(doc)).toBe('(property "Value" "1k"\n\t(at 3 4 90)\n)');
    setChildValue(doc.root, "hide", "yes");
    expect(printSexpr(doc)).toBe('(property "Value" "1k"\n\t(at 3 4 90)\n\t(hide yes)\n)');
  });

  test("removeChild takes its whitespace along and keeps the rest byte-identical", () => {
    const doc = parseSexpr(source);
    removeChild(doc.root, child(doc.root, "wire")!);
    expect(printSexpr(doc)).toBe("(kicad_sch\n\t(version 20250114)\n)\n");
  });

  test("adding a list to an inline list opens it onto its own lines", () => {
    const doc = parseSexpr("(a\n\t(b c)\n)");
    insertChild(child(doc.root, "b")!, list("d", 1));
    expect(printSexpr(doc)).toBe("(a\n\t(b c\n\t\t(d 1)\n\t)\n)");
  });

  test("quoted strings are escaped like KiCad's Quotew", () => {
    const doc = parseSexpr("(a)");
    insertChild(doc.root, q('x "y" \\ z\nw'));
    expect(printSexpr(doc)).toBe('(a "x \\"y\\" \\\\ z\\nw")');
    expect(text(doc.root, 1)).toBe('x "y" \\ z\nw');
  });
});
