/**
 * Bus label grammar, as kicad-cli 9 parses it (NET_SETTINGS::ParseBusVector / ParseBusGroup),
 * so a label expands to exactly the member nets eeschema creates.
 *
 *   vector:  `D[0..7]`  → D0 … D7 (bounds may be given in either order; equal bounds are not a bus)
 *   group:   `{SDA SCL}` → SDA, SCL;  named group `I2C{SDA SCL}` → I2C.SDA, I2C.SCL
 *   nesting: group members may themselves be vectors: `MEM{A[0..3] RW}` → MEM.A0 … MEM.RW
 *
 * Braces right after `_`, `^` or `~` are formatting markup (subscript, superscript, overbar),
 * not a group. Member names drop it: `~{D}[0..1]` has members D0 and D1, and `SWD{~{RESET} CLK}`
 * has SWD.RESET, so a wire labelled `SWD.~{RESET}` is not that member. A group's own prefix drops
 * the markup character and the opening brace but keeps the closing one (`~{Q}{A}` → `Q}.A`),
 * as kicad-cli 9.0 does (measured: test/kicad/bus.test.ts).
 */

export interface BusVector {
  kind: "vector";
  prefix: string;
  members: string[];
}

export interface BusGroup {
  kind: "group";
  /** Empty for an unnamed group. */
  prefix: string;
  /** Member labels, markup removed (each may itself be a vector). */
  members: string[];
}

function isMarkup(c: string | undefined): boolean {
  return c === "_" || c === "^" || c === "~";
}

export function parseBusVector(label: string): BusVector | undefined {
  const n = label.length;
  let i = 0;
  let prefix = "";
  let nesting = 0;
  for (; i < n; i++) {
    const c = label[i]!;
    if (c === "{") {
      if (i === 0 || !isMarkup(label[i - 1])) return undefined;
      nesting++;
      prefix = prefix.slice(0, -1);
      continue;
    }
    if (c === "}") {
      nesting--;
      continue;
    }
    if (c === " " || c === "]") return undefined;
    if (c === "[") break;
    prefix += c;
  }
  i++;
  if (i >= n) return undefined;
  let digits = "";
  let begin = 0;
  for (; i < n; i++) {
    if (label[i] === "." && label[i + 1] === ".") {
      begin = Number(digits || "0");
      i += 2;
      break;
    }
    if (!isDigit(label[i]!)) return undefined;
    digits += label[i];
  }
  if (i >= n) return undefined;
  digits = "";
  let end = 0;
  for (; i < n; i++) {
    if (label[i] === "]") {
      end = Number(digits || "0");
      i++;
      break;
    }
    if (!isDigit(label[i]!)) return undefined;
    digits += label[i];
  }
  for (; i < n; i++) {
    if (label[i] !== "}") return undefined;
    nesting--;
  }
  if (nesting !== 0 || begin === end) return undefined;
  const lo = Math.min(begin, end);
  const hi = Math.max(begin, end);
  const members: string[] = [];
  for (let k = lo; k <= hi; k++) members.push(`${prefix}${k}`);
  return { kind: "vector", prefix, members };
}

export function parseBusGroup(label: string): BusGroup | undefined {
  const n = label.length;
  let i = 0;
  let prefix = "";
  let nesting = 0;
  for (; i < n; i++) {
    const c = label[i]!;
    if (c === "{") {
      if (i === 0 || !isMarkup(label[i - 1])) break;
      nesting++;
      prefix = prefix.slice(0, -1);
      continue;
    }
    if (c === "}") nesting--;
    if (c === " " || c === "[" || c === "]") return undefined;
    prefix += c;
  }
  if (nesting !== 0) return undefined;
  i++;
  if (i >= n) return undefined;
  const members: string[] = [];
  let current = "";
  for (; i < n; i++) {
    const c = label[i]!;
    if (c === "{") {
      if (i === 0 || !isMarkup(label[i - 1])) return undefined;
      nesting++;
      current = current.slice(0, -1);
      continue;
    }
    if (c === "}") {
      if (nesting) {
        nesting--;
        continue;
      }
      if (current) members.push(escapeNetName(current));
      return { kind: "group", prefix, members };
    }
    // Commas are not strictly legal, but KiCad reads them as separators.
    if (c === " " || c === ",") {
      if (current) members.push(escapeNetName(current));
      current = "";
      continue;
    }
    current += c;
  }
  return undefined;
}

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}

/** One net inside a bus, as KiCad's SCH_CONNECTION models it. */
export interface BusMember {
  /** Net name inside the bus: group prefix included (`I2C.SDA`), sheet path excluded. */
  name: string;
  /** The member as written in its own label (`SDA`, `A0`); KiCad matches group members on it. */
  local: string;
  /** Position inside the vector it came from; KiCad matches vector members by index. */
  vectorIndex?: number;
}

/** Bus aliases (`(bus_alias "CTRL" (members "RD" "WR"))`), by alias name. */
export type BusAliases = ReadonlyMap<string, readonly string[]>;

/**
 * Flattens a bus label to its member nets, in KiCad's order. Returns undefined when the
 * label is a plain net name. A group member naming a bus alias expands to the alias members.
 */
export function expandBus(label: string, aliases?: BusAliases): BusMember[] | undefined {
  const vector = parseBusVector(label);
  if (vector) return vector.members.map((name, vectorIndex) => ({ name, local: name, vectorIndex }));
  const group = parseBusGroup(label);
  if (!group) return undefined;
  const prefix = group.prefix ? `${group.prefix}.` : "";
  const out: BusMember[] = [];
  const add = (member: string) => {
    const inner = parseBusVector(member);
    if (inner)
      inner.members.forEach((name, vectorIndex) => out.push({ name: prefix + name, local: name, vectorIndex }));
    else out.push({ name: prefix + member, local: member });
  };
  for (const member of group.members) {
    const alias = aliases?.get(member);
    if (alias) for (const aliasMember of alias) add(escapeNetName(aliasMember));
    else add(member);
  }
  return out;
}

/**
 * KiCad's EscapeString(…, CTX_NETNAME): `/` is the hierarchy separator in net names, so a
 * literal slash becomes `{slash}`; line breaks are dropped.
 */
export function escapeNetName(text: string): string {
  let out = "";
  for (const ch of text) {
    if (ch === "/") out += "{slash}";
    else if (ch === "\n" || ch === "\r") continue;
    else out += ch;
  }
  return out;
}
