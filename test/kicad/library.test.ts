import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KicadCli } from "../../src/kicad/cli/kicad-cli.ts";
import { Libraries, openLibraries } from "../../src/kicad/library/libraries.ts";
import { children, head, insertChild, list, parseSexpr, printSexpr, text } from "../../src/kicad/sexpr/index.ts";
import { cleanupTempDirs, copyFixture, makeTempDir, requireKicadCli } from "../support/kicad.ts";
import { thrownCopperheadError } from "../support/errors.ts";

let cli: KicadCli;
beforeAll(async () => {
  cli = await requireKicadCli();
});
afterAll(cleanupTempDirs);

const tokens = (s: string) => s.replace(/\s+/g, " ").trim();

describe("library tables", () => {
  test("stock footprints resolve through the global table with ${KICAD9_FOOTPRINT_DIR}", async () => {
    const libs = await openLibraries(await copyFixture("usb-led"));
    const fp = libs.resolveFootprint("Resistor_SMD:R_0603_1608Metric");
    expect(fp.file).toBe(join(cli.shareDir!, "footprints", "Resistor_SMD.pretty", "R_0603_1608Metric.kicad_mod"));
    expect(head(fp.doc.root)).toBe("footprint");
    expect(libs.resolveFootprint("Resistor_SMD:R_0603_1608Metric")).toBe(fp);
  });

  test("a derived symbol is flattened exactly as the fixture's lib_symbols cache holds it", async () => {
    const dir = await copyFixture("usb-led");
    const libs = await openLibraries(dir);
    const cached = children(
      children(parseSexpr(readFileSync(join(dir, "regulator.kicad_sch"), "utf8")).root, "lib_symbols")[0]!,
      "symbol",
    ).find((s) => text(s, 1) === "Regulator_Linear:AP2112K-3.3")!;
    const resolved = libs.resolveSymbol("Regulator_Linear:AP2112K-3.3");
    expect(text(resolved, 1)).toBe("Regulator_Linear:AP2112K-3.3");
    insertChild(list("lib_symbols"), resolved);
    expect(tokens(printSexpr(resolved))).toBe(tokens(printSexpr(cached)));
  });

  test("the project table comes first and expands ${KIPRJMOD}", async () => {
    const dir = await makeTempDir();
    mkdirSync(join(dir, "mine.pretty"));
    writeFileSync(join(dir, "mine.pretty", "Pad.kicad_mod"), '(footprint "Pad"\n\t(layer "F.Cu")\n)\n');
    writeFileSync(
      join(dir, "fp-lib-table"),
      '(fp_lib_table\n\t(version 7)\n\t(lib (name "Resistor_SMD")(type "KiCad")(uri "${KIPRJMOD}/mine.pretty")(options "")(descr ""))\n)\n',
    );
    const libs = new Libraries({ projectDir: dir, major: cli.version.major, shareDir: cli.shareDir });
    expect(libs.resolveFootprint("Resistor_SMD:Pad").file).toBe(join(dir, "mine.pretty", "Pad.kicad_mod"));
    expect(libs.tableFiles("footprint")[0]).toBe(join(dir, "fp-lib-table"));
  });

  test("errors are typed and name what was searched", async () => {
    const dir = await makeTempDir();
    const libs = new Libraries({
      projectDir: dir,
      major: 9,
      shareDir: null,
      configHome: join(dir, "no-config"),
      env: {},
    });
    const missing = thrownCopperheadError(() => libs.resolveFootprint("Resistor_SMD:R_0603_1608Metric"));
    expect(missing.code).toBe("library_not_found");
    expect(missing.message).toContain("fp-lib-table");
    expect(thrownCopperheadError(() => libs.resolveFootprint("no-colon")).code).toBe("footprint_not_found");
    writeFileSync(
      join(dir, "sym-lib-table"),
      '(sym_lib_table\n\t(version 7)\n\t(lib (name "Gone")(type "KiCad")(uri "${NOT_SET_ANYWHERE}/gone.kicad_sym")(options "")(descr ""))\n)\n',
    );
    const unresolved = thrownCopperheadError(() => libs.resolveSymbol("Gone:X"));
    expect(unresolved.code).toBe("library_not_found");
    expect(unresolved.fix).toContain("NOT_SET_ANYWHERE");
    const stock = await openLibraries(dir);
    expect(thrownCopperheadError(() => stock.resolveSymbol("Device:No_Such_Symbol")).code).toBe("symbol_not_found");
  });

  test("item names are names: no separator, '..' or control character, and the file stays inside its library folder", async () => {
    const dir = await makeTempDir();
    mkdirSync(join(dir, "mine.pretty"));
    const outside = join(await makeTempDir(), "Outside.kicad_mod");
    writeFileSync(outside, '(footprint "Outside"\n\t(layer "F.Cu")\n)\n');
    symlinkSync(outside, join(dir, "mine.pretty", "Linked.kicad_mod"));
    writeFileSync(
      join(dir, "fp-lib-table"),
      '(fp_lib_table\n\t(version 7)\n\t(lib (name "Mine")(type "KiCad")(uri "${KIPRJMOD}/mine.pretty")(options "")(descr ""))\n)\n',
    );
    const libs = new Libraries({ projectDir: dir, major: cli.version.major, shareDir: cli.shareDir });
    for (const id of ["Mine:../mine.pretty/Linked", "Mine:a/b", "Mine:a\\b", "Mine:..", "Mine:.", "Mine:x\u0000y"]) {
      const refused = thrownCopperheadError(() => libs.resolveFootprint(id));
      expect({ id, code: refused.code, plain: refused.message.includes("plain name") }).toEqual({
        id,
        code: "footprint_not_found",
        plain: true,
      });
    }
    expect(thrownCopperheadError(() => libs.resolveSymbol("Device:../../R")).code).toBe("symbol_not_found");
    const linked = thrownCopperheadError(() => libs.resolveFootprint("Mine:Linked"));
    expect(linked.code).toBe("library_unreadable");
    expect(linked.message).toContain("outside");
  });
});
