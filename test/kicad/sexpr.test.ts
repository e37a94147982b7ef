import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
  child,
  children,
  cloneNode,
  childText,
  flag,
  head,
  insertChild,
  list,
  num,
  parseSexpr,
  printSexpr,
  printSexprBytes,
  q,
  removeChild,
  setAtom,
  SexprError,
  text,
  walk,
} from "../../src/kicad/sexpr/index.ts";

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
      const source = readFileSync(file);
      expect(Buffer.from(printSexprBytes(parseSexpr(source, { file })))).toEqual(source);
    });
  }

  const samples: Record<string, string> = {
    "tabs and newlines": '(kicad_sch\n\t(version 20250114)\n\t(uuid "a")\n)\n',
    spaces: "(a  (b   c)\n    (d))",
    crlf: '(a\r\n\t(b "x")\r\n)\r\n',
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

/** Bytes from text (UTF-8) and raw byte values. */
function bytes(...parts: (string | number[])[]): Uint8Array {
  return Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : Buffer.from(p))));
}

describe("malformed input gives a typed SexprError with line and column", () => {
  const cases: { name: string; source: string | Uint8Array; line: number; column: number; reason: RegExp }[] = [
    { name: "empty file", source: "", line: 1, column: 1, reason: /empty/ },
    { name: "whitespace only", source: "\n\t \n", line: 3, column: 1, reason: /empty/ },
    { name: "bare atom", source: "hello", line: 1, column: 1, reason: /expected '\('/ },
    { name: "quoted string at top level", source: '"x"', line: 1, column: 1, reason: /expected '\('/ },
    { name: "lone close paren", source: ")", line: 1, column: 1, reason: /no open list/ },
    { name: "only an open paren", source: "(", line: 1, column: 2, reason: /still open/ },
    {
      name: "unclosed list",
      source: "(a (b c)\n",
      line: 2,
      column: 1,
      reason: /1 list\(s\) still open .*line 1, column 1/,
    },
    { name: "two unclosed lists", source: "((a", line: 1, column: 4, reason: /2 list\(s\) still open/ },
    { name: "junk before the root", source: "junk (a)", line: 1, column: 1, reason: /expected '\('/ },
    { name: "junk after a comment line", source: "# made by hand\nx (a)", line: 2, column: 1, reason: /expected '\('/ },
    { name: "close paren before the root", source: "\n  ) (a)", line: 2, column: 3, reason: /no open list/ },
    { name: "unterminated string", source: '(a "unterminated', line: 1, column: 4, reason: /unterminated string/ },
    { name: "string ending in a backslash", source: '(a "x\\', line: 1, column: 4, reason: /unterminated string/ },
    { name: "escaped quote never closed", source: '(a "x\\")', line: 1, column: 4, reason: /unterminated string/ },
    { name: "text glued to a string", source: '(a "x"y)', line: 1, column: 7, reason: /after a string/ },
    {
      name: "control character after NUL whitespace",
      source: "(a \u0000\u0001)",
      line: 1,
      column: 5,
      reason: /U\+0001/,
    },
    { name: "control character inside an atom", source: "(ab\u0007c)", line: 1, column: 4, reason: /U\+0007/ },
    { name: "binary garbage", source: "(\u0001\u0002\u0003)", line: 1, column: 2, reason: /control character/ },
    { name: "CRLF line counting", source: "(a\r\n(b\r\n", line: 3, column: 1, reason: /still open/ },
    { name: "unicode before the error", source: '(Ω ü\n日本 "x)', line: 2, column: 4, reason: /unterminated string/ },
    {
      name: "a byte that is not UTF-8 counts as one column",
      source: bytes('(gen "caf', [0xe9], '" ', [0xff], ' "x'),
      line: 1,
      column: 15,
      reason: /unterminated string/,
    },
    {
      name: "astral characters count as one column",
      source: '(🚀🚀 "x',
      line: 1,
      column: 5,
      reason: /unterminated string/,
    },
    {
      name: "100,000 unclosed levels",
      source: "(".repeat(100_000),
      line: 1,
      column: 100_001,
      reason: /100000 list\(s\) still open/,
    },
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
      expect(err.toJSON().error).toMatchObject({
        code: "parse_error",
        file: "board.kicad_pcb",
        line: c.line,
        column: c.column,
      });
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
        list(
          "property",
          q("Reference"),
          q("R1"),
          list("at", 101.6, 49.53, 0),
          list("effects", list("font", list("size", 1.27, 1.27))),
        ),
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

describe("any bytes round-trip", () => {
  const roundTrips = (source: Uint8Array) =>
    expect(Buffer.from(printSexprBytes(parseSexpr(source)))).toEqual(Buffer.from(source));

  test("a Latin-1 byte in a string is kept, and reads as Latin-1", () => {
    const source = bytes('(kicad_pcb\n\t(version 20241229)\n\t(generator "pcbnew', [0xe9], '")\n)\n');
    const doc = parseSexpr(source);
    roundTrips(source);
    expect(childText(doc.root, "generator")).toBe("pcbnewé");
  });

  test("invalid UTF-8 of every kind survives: stray continuation, truncated, overlong, surrogate, past U+10FFFF", () => {
    for (const bad of [
      [0x80],
      [0xc3],
      [0xe2, 0x82],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xff, 0xfe],
    ]) {
      roundTrips(bytes('(a "x', bad, 'y" b', bad, ")\n"));
    }
  });

  test("valid UTF-8 next to invalid bytes decodes as UTF-8", () => {
    const doc = parseSexpr(bytes('(a "Ω', [0xb5], '🚀")'));
    expect(text(doc.root, 1)).toBe("Ωµ🚀");
  });

  test("hex and octal escapes are bytes: a UTF-8 sequence spelled in escapes reads as its character", () => {
    const doc = parseSexpr('(a "caf\\xc3\\xa9" "caf\\351" "\\x41\\102")');
    expect([text(doc.root, 1), text(doc.root, 2), text(doc.root, 3)]).toEqual(["café", "café", "AB"]);
  });

  test("CRLF line ends", () => {
    roundTrips(bytes('(kicad_sch\r\n\t(version 20231120)\r\n\t(uuid "x")\r\n)\r\n'));
  });

  test("NUL bytes are whitespace, as in KiCad's lexer", () => {
    const source = bytes("(a", [0], "b", [0, 0], "(c))", [0]);
    const doc = parseSexpr(source);
    roundTrips(source);
    expect(text(doc.root, 1)).toBe("b");
    expect(child(doc.root, "c")).toBeDefined();
  });

  test("a byte-order mark before the root is refused, as KiCad refuses it", () => {
    expect(() => parseSexpr(bytes([0xef, 0xbb, 0xbf], "(a)"))).toThrow(SexprError);
  });

  test("comment lines before the root are kept and skipped", () => {
    const source = bytes('# exported by a script\n  # second line\n(footprint "R"\n\t(layer "F.Cu")\n)\n');
    const doc = parseSexpr(source);
    roundTrips(source);
    expect(head(doc.root)).toBe("footprint");
  });

  test("a string is also a lossless input: printSexpr and parseSexpr compose", () => {
    const doc = parseSexpr(bytes('(a "', [0xe9], '")'));
    const again = parseSexpr(printSexpr(doc));
    expect(Buffer.from(printSexprBytes(again))).toEqual(Buffer.from(bytes('(a "', [0xe9], '")')));
  });
});

describe("content after the root list is kept and not read, as KiCad does", () => {
  const cases: Record<string, [root: string, trailing: string]> = {
    "a stray close paren": ["(a\n\t(b)\n)", "\n)\n"],
    "a second list (a .kicad_dru holds many)": [
      "(version 1)",
      '\n\n(rule "x"\n\t(condition "A.NetClass == \'P\'")\n)\n',
    ],
    text: ["(a)", ' junk "unterminated'],
    "unbalanced parens": ["(a)", "\n(b (c\n"],
  };
  for (const [name, [root, trailing]] of Object.entries(cases)) {
    test(name, () => {
      const doc = parseSexpr(root + trailing);
      expect(printSexpr(doc)).toBe(root + trailing);
      expect(printSexpr(doc.root)).toBe(root);
      expect(doc.trailing).toBe(trailing);
    });
  }

  test("edits leave the trailing content alone", () => {
    const doc = parseSexpr("(a\n\t(b 1)\n)\n)\n(junk");
    setAtom(child(doc.root, "b")!, 1, 2);
    expect(printSexpr(doc)).toBe("(a\n\t(b 2)\n)\n)\n(junk");
  });
});

describe("lists whose '(' is missing (KiCad 9.0.0's teardrop settings)", () => {
  const teardrops =
    '(pad "1" smd\n\t(teardrops\n\t\t(max_width 2)\n\t\t(curved_edges no)filter_ratio 0.9)\n\t(enabled yes)\n)\n\t(uuid "u")\n)\n';

  test("are read the way KiCad reads them, and print back unchanged", () => {
    const doc = parseSexpr(teardrops);
    expect(printSexpr(doc)).toBe(teardrops);
    expect(doc.trailing).toBe("\n");
    const td = child(doc.root, "teardrops")!;
    expect(num(child(td, "filter_ratio")!, 1)).toBe(0.9);
    expect(flag(td, "enabled")).toBe(true);
    expect(childText(doc.root, "uuid")).toBe("u");
  });

  test("an edit inside keeps the missing paren missing", () => {
    const doc = parseSexpr(teardrops);
    setAtom(child(child(doc.root, "teardrops")!, "filter_ratio")!, 1, 0.5);
    expect(printSexpr(doc)).toBe(teardrops.replace("filter_ratio 0.9", "filter_ratio 0.5"));
  });

  test("when that reading does not balance, a glued atom is a plain atom", () => {
    const doc = parseSexpr("(a (b)c)");
    expect(doc.root.items.map((i) => i.type)).toEqual(["atom", "list", "atom"]);
    expect(text(doc.root, 2)).toBe("c");
  });
});

describe("edits next to bytes that are not UTF-8", () => {
  test("changing one atom changes only that atom's bytes", () => {
    const source = bytes(
      '(kicad_sch\n\t(generator "eeschema',
      [0xe9],
      '")\n\t(property "Value" "1k")\n\t(title "',
      [0xfc, 0x80],
      '")\n)\n',
    );
    const doc = parseSexpr(source);
    setAtom(child(doc.root, "property")!, 2, q("4k7"));
    expect(Buffer.from(printSexprBytes(doc))).toEqual(
      Buffer.from(
        bytes(
          '(kicad_sch\n\t(generator "eeschema',
          [0xe9],
          '")\n\t(property "Value" "4k7")\n\t(title "',
          [0xfc, 0x80],
          '")\n)\n',
        ),
      ),
    );
  });

  test("an inserted node beside them is written as UTF-8 and they stay as they were", () => {
    const source = bytes('(a\n\t(b "', [0xe9], '")\n)\n');
    const doc = parseSexpr(source);
    insertChild(doc.root, list("c", q("é")));
    expect(Buffer.from(printSexprBytes(doc))).toEqual(Buffer.from(bytes('(a\n\t(b "', [0xe9], '")\n\t(c "é")\n)\n')));
  });

  test("a value copied from such an atom keeps its bytes", () => {
    const doc = parseSexpr(bytes('(a\n\t(b "', [0xe9], '")\n\t(c "x")\n)\n'));
    const b = child(doc.root, "b")!;
    setAtom(child(doc.root, "c")!, 1, { type: "atom", pre: "", raw: (b.items[1] as { raw: string }).raw });
    expect(Buffer.from(printSexprBytes(doc))).toEqual(
      Buffer.from(bytes('(a\n\t(b "', [0xe9], '")\n\t(c "', [0xe9], '")\n)\n')),
    );
  });
});

describe("the compact tree behaves like plain nodes", () => {
  const source =
    '(kicad_pcb\n\t(net 1 "GND")\n\t(footprint "R"\n\t\t(at 1 2)\n\t\t(pad "1" smd)\n\t)\n\t(footprint "C"\n\t\t(at 3 4)\n\t)\n)\n';

  test("a node keeps its identity however it is reached", () => {
    const doc = parseSexpr(source);
    const first = child(doc.root, "footprint")!;
    expect(child(doc.root, "footprint")).toBe(first);
    expect(doc.root.items[2]).toBe(first);
    expect(children(doc.root, "footprint")[0]).toBe(first);
    expect(child(first, "at")).toBe(child(first, "at"));
  });

  test("values read before and after a list is opened agree, and follow edits", () => {
    const doc = parseSexpr(source);
    const at = child(child(doc.root, "footprint")!, "at")!;
    expect([head(at), text(at, 1), num(at, 2)]).toEqual(["at", "1", 2]);
    setAtom(at, 1, 9);
    expect([head(at), text(at, 1), num(at, 2)]).toEqual(["at", "9", 2]);
    expect(printSexpr(doc)).toBe(source.replace("(at 1 2)", "(at 9 2)"));
  });

  test("reordering, moving and replacing items prints what the items say", () => {
    const doc = parseSexpr(source);
    const [r, c] = children(doc.root, "footprint");
    doc.root.items.splice(doc.root.items.indexOf(c!), 1);
    doc.root.items.splice(doc.root.items.indexOf(r!), 0, c!);
    expect(printSexpr(doc)).toBe(
      '(kicad_pcb\n\t(net 1 "GND")\n\t(footprint "C"\n\t\t(at 3 4)\n\t)\n\t(footprint "R"\n\t\t(at 1 2)\n\t\t(pad "1" smd)\n\t)\n)\n',
    );
    const net = child(doc.root, "net")!;
    net.items = [net.items[0]!, net.items[1]!];
    expect(printSexpr(net)).toBe("\n\t(net 1)");
  });

  test("whitespace set on a list nobody opened is printed", () => {
    const doc = parseSexpr(source);
    const net = child(doc.root, "net")!;
    net.pre = " ";
    net.post = " ";
    expect(printSexpr(doc.root).split("\n")[0]).toBe('(kicad_pcb (net 1 "GND" )');
  });

  test("a parsed node inserted into another document prints its own bytes", () => {
    const library = parseSexpr(bytes('(footprint "X"\n\t(property "Description" "caf', [0xe9], '")\n)\n'));
    const board = parseSexpr("(kicad_pcb\n\t(version 20241229)\n)\n");
    insertChild(board.root, child(library.root, "property")!);
    expect(Buffer.from(printSexprBytes(board))).toEqual(
      Buffer.from(bytes('(kicad_pcb\n\t(version 20241229)\n\t(property "Description" "caf', [0xe9], '")\n)\n')),
    );
  });

  test("cloneNode makes plain, independent nodes that print the same", () => {
    const doc = parseSexpr(source);
    const original = child(doc.root, "footprint")!;
    const copy = cloneNode(original);
    expect(Object.keys(copy).sort()).toEqual(["items", "post", "pre", "start", "type"]);
    expect(printSexpr(copy)).toBe(printSexpr(original));
    setAtom(child(copy, "at")!, 1, 5);
    expect(text(child(original, "at")!, 1)).toBe("1");
  });

  test("a list whose '(' is missing stays so when opened and printed piece by piece", () => {
    const doc = parseSexpr("(teardrops\n\t(curved_edges no)filter_ratio 0.9)\n\t(enabled yes)\n)");
    const ratio = child(doc.root, "filter_ratio")!;
    expect(ratio.implicit).toBe(true);
    expect(ratio.start).toBe("(teardrops\n\t(curved_edges no)".length);
    insertChild(doc.root, list("max_width", 2));
    expect(printSexpr(doc)).toBe(
      "(teardrops\n\t(curved_edges no)filter_ratio 0.9)\n\t(enabled yes)\n\t(max_width 2)\n)",
    );
  });

  test("trailing text can be replaced", () => {
    const doc = parseSexpr("(a)\n)\n");
    doc.trailing = "\n";
    expect(printSexpr(doc)).toBe("(a)\n");
  });
});
