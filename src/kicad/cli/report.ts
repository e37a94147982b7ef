/**
 * Schemas for kicad-cli's JSON reports (`sch erc` and `pcb drc` with `--format json`).
 *
 * Parsing is lenient on purpose: newer KiCad versions add keys (KiCad 10 adds `ignored_checks`
 * and per-violation `comment`), so unknown keys pass through and fields we do not rely on
 * are optional. What checks need — each violation's `type`, `severity` and item uuids — is
 * required, and a report without it is an error, never an empty pass. Field names stay
 * KiCad's (snake_case) so a report can be compared with kicad-cli's file directly.
 *
 * Match violations on `type`; `description` is translated in some locales. Item `pos` in
 * ERC reports is 100× too small (a KiCad bug, see `checks/kicad-findings.ts`), so identify
 * objects by `uuid`.
 */
import * as v from "valibot";
import { CopperheadError } from "../../errors.ts";

const ItemSchema = v.looseObject({
  uuid: v.string(),
  description: v.optional(v.string(), ""),
  pos: v.optional(v.looseObject({ x: v.number(), y: v.number() })),
});

const ViolationSchema = v.looseObject({
  type: v.string(),
  /** "error" | "warning" in practice; kept open so a new severity does not break parsing. */
  severity: v.string(),
  description: v.optional(v.string(), ""),
  items: v.optional(v.array(ItemSchema), []),
  /** True for violations the project excludes (reported because we pass `--severity-all`). */
  excluded: v.optional(v.boolean()),
});

const ReportHeader = {
  kicad_version: v.optional(v.string()),
  coordinate_units: v.optional(v.string()),
  source: v.optional(v.string()),
};

const ErcReportSchema = v.looseObject({
  ...ReportHeader,
  sheets: v.array(
    v.looseObject({
      path: v.string(),
      uuid_path: v.optional(v.string()),
      violations: v.optional(v.array(ViolationSchema), []),
    }),
  ),
});

const DrcReportSchema = v.looseObject({
  ...ReportHeader,
  violations: v.array(ViolationSchema),
  unconnected_items: v.optional(v.array(ViolationSchema), []),
  schematic_parity: v.optional(v.array(ViolationSchema), []),
});

export type ReportItem = v.InferOutput<typeof ItemSchema>;
export type Violation = v.InferOutput<typeof ViolationSchema>;
export type ErcReport = v.InferOutput<typeof ErcReportSchema>;
export type DrcReport = v.InferOutput<typeof DrcReportSchema>;

export function parseErcReport(text: string, source: string): ErcReport {
  return parseReport(ErcReportSchema, text, "ERC", source);
}

export function parseDrcReport(text: string, source: string): DrcReport {
  return parseReport(DrcReportSchema, text, "DRC", source);
}

function parseReport<S extends v.GenericSchema>(
  schema: S,
  text: string,
  kind: string,
  source: string,
): v.InferOutput<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw malformed(kind, source, (err as Error).message);
  }
  const result = v.safeParse(schema, json);
  if (!result.success) throw malformed(kind, source, v.summarize(result.issues));
  return result.output;
}

function malformed(kind: string, source: string, reason: string): CopperheadError {
  return new CopperheadError("kicad_failed", `kicad-cli wrote a malformed ${kind} report for ${source}: ${reason}`, {
    fix: "This KiCad version's report format is not understood; please report it with `kicad-cli version`.",
    file: source,
  });
}
