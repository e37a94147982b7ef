/**
 * Engineering values as hardware people write them in symbol fields and requirement rules:
 * `4k7`, `100nF`, `0.1u`, `3.3V`, `1R5`, `100 mA`, `1e-6`, and board lengths in mm, mil or in.
 *
 * Decisions, so a rule never passes by accident:
 * - A text is a quantity only if all of it parses. `100nF 50V X7R` or `3V3_OUT` are text,
 *   not 100 nF or 3.3 V, so a requirement compares them as strings (only `==`/`!=`).
 * - A trailing tolerance (`10k 1%`, `10k/1%`, `10k±5%`) is ignored: it says how precise the
 *   part is, not what it is. A lone `5%` is the quantity 5 with unit `%`.
 * - Prefixes: p n u µ μ m k M G, plus `K` for kilo. `m` is milli and `M` is mega, always.
 * - IEC 60062 style puts the prefix or unit where the decimal point goes: `4k7` = 4.7 k,
 *   `2n2` = 2.2 n, `1R5` = 1.5 Ω, `3V3` = 3.3 V. `R`, `ohm` and `Ω` all mean ohms.
 * - Values are built from their decimal text (`4k7` → `Number("4.7e3")`), so two spellings
 *   of the same number (`0.1u`, `100n`) compare exactly equal, with no epsilon.
 */

export interface Quantity {
  /** In base units: `100nF` is 1e-7. */
  value: number;
  /** Canonical unit symbol (`V`, `A`, `F`, `H`, `Ω`, `W`, `Hz`, `s`, `%`); absent for a bare number. */
  unit?: string;
}

const PREFIX_EXPONENT: Record<string, number> = {
  p: -12,
  n: -9,
  u: -6,
  µ: -6,
  μ: -6,
  m: -3,
  k: 3,
  K: 3,
  M: 6,
  G: 9,
};

const UNIT_ALIASES: Record<string, string> = {
  V: "V",
  A: "A",
  F: "F",
  H: "H",
  W: "W",
  Hz: "Hz",
  s: "s",
  "%": "%",
  R: "Ω",
  Ω: "Ω",
  ohm: "Ω",
  ohms: "Ω",
  Ohm: "Ω",
  Ohms: "Ω",
};

/** Units that may stand in for the decimal point, as in `1R5` or `3V3`. */
const DECIMAL_UNITS = new Set(["R", "V", "A", "F", "H", "W"]);

const PREFIX = "[pnuµμmkKMG]";
const UNIT = "ohms?|Ohms?|Hz|[VAFHWsRΩ%]";
const DECIMAL = "[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)";
const PLAIN_RE = new RegExp(`^(${DECIMAL})(?:[eE]([+-]?\\d+))?\\s*(${PREFIX})?(${UNIT})?$`);
const RKM_RE = new RegExp(`^(\\d+)(${PREFIX}|[${[...DECIMAL_UNITS].join("")}])(\\d+)(${UNIT})?$`);
const TOLERANCE_RE = /(?:\s*\/\s*|\s+|\s*(?=±))±?\d+(?:\.\d+)?\s*%$/;

/**
 * No quantity is longer: values come from the repo, and `TOLERANCE_RE` is unanchored at its
 * start, so on a long run of spaces it would retry every position (quadratic). Longer text is
 * simply not a quantity.
 */
const MAX_QUANTITY_LENGTH = 64;

/** Parses an engineering value; `undefined` when the text is not (entirely) a quantity. */
export function parseQuantity(text: string): Quantity | undefined {
  if (text.length > MAX_QUANTITY_LENGTH && text.trim().length > MAX_QUANTITY_LENGTH) return undefined;
  const trimmed = text.trim().replace(TOLERANCE_RE, "");
  const plain = PLAIN_RE.exec(trimmed);
  if (plain) {
    const [, coef, exp, prefix, unit] = plain;
    return quantity(coef!, Number(exp ?? 0) + (prefix ? PREFIX_EXPONENT[prefix]! : 0), unit);
  }
  const rkm = RKM_RE.exec(trimmed);
  if (rkm) {
    const [, whole, letter, fraction, unit] = rkm;
    const isPrefix = letter! in PREFIX_EXPONENT;
    // `4k7Ω` is fine; `3V3A` names two units.
    if (!isPrefix && unit) return undefined;
    return quantity(`${whole}.${fraction}`, isPrefix ? PREFIX_EXPONENT[letter!]! : 0, isPrefix ? unit : letter);
  }
  return undefined;
}

function quantity(coef: string, exponent: number, unit: string | undefined): Quantity {
  const value = Number(`${coef}e${exponent}`);
  return unit ? { value, unit: UNIT_ALIASES[unit]! } : { value };
}

/**
 * Orders two quantities, or says why they cannot be compared. A bare number compares with
 * anything (`R2.value >= 680` against `1k`); two different units never do (`1uF` vs `3.3V`).
 */
export function compareQuantities(a: Quantity, b: Quantity): { order: number } | { mismatch: string } {
  if (a.unit && b.unit && a.unit !== b.unit) {
    return { mismatch: `cannot compare ${a.unit} with ${b.unit}` };
  }
  return { order: a.value < b.value ? -1 : a.value > b.value ? 1 : 0 };
}

const MM_PER: Record<string, number> = { mm: 1, mil: 0.0254, mils: 0.0254, in: 25.4, inch: 25.4, '"': 25.4 };
const LENGTH_RE = new RegExp(`^(${DECIMAL})(?:[eE]([+-]?\\d+))?\\s*(mm|mils?|inch|in|")?$`);

/** Parses a board length to millimetres; a bare number is millimetres, KiCad's own unit. */
export function parseLength(text: string): number | undefined {
  const m = LENGTH_RE.exec(text.trim());
  if (!m) return undefined;
  const [, coef, exp, unit] = m;
  return Number(`${coef}e${exp ?? 0}`) * MM_PER[unit ?? "mm"]!;
}
