/**
 * A diff in words: plain text for a terminal, markdown for a pull-request comment or a run's
 * summary.md, and a short form of a few lines for a commit message body. One builder makes the
 * sections; the formats differ only in how a name is quoted and how sections are marked, so
 * the terminal and the pull request never disagree about what changed.
 *
 * Names and values come from the repo, so every form spells out control, bidi and invisible
 * characters (visible.ts), and the markdown one renders no HTML a name carries: `<` outside a
 * code span is `&lt;` (a `<!--` in a value would hide the rest of a pull-request comment), and
 * a code span's fence is longer than any backtick run inside it.
 */
import { codeSpans } from "../spec/mentions.ts";
import { shown } from "../visible.ts";
import type {
  BoardDiff,
  ComponentChange,
  CopperItem,
  DesignDiff,
  FieldChange,
  GroupChange,
  MemberMove,
  SymbolPlacement,
} from "./diff.ts";

export interface DiffLabels {
  /** How the states are named in the heading: `HEAD (1a2b3c4)`, `the working tree`. */
  base: string;
  head: string;
}

interface Section {
  title: string;
  lines: string[];
}

/** How a format quotes a name and marks what happened to an entry. */
interface Style {
  code: (text: string) => string;
  mark: (status: Status) => string;
}

type Status = "added" | "removed" | "changed" | "moved" | "swapped" | "renamed";

const TEXT: Style = {
  code: (t) => t,
  mark: (status) => ({ added: "+", removed: "−", changed: "~", moved: "↷", swapped: "⇄", renamed: "~" })[status],
};

/** Words, not signs: a markdown bullet that starts with `+` would start a nested list. */
const MARKDOWN: Style = {
  code,
  mark: (status) => `*${status}*`,
};

/** At most this many members of a net or pins are listed before "and N more". */
const LIST_LIMIT = 8;

/** Plain text; `heading: null` leaves the heading line out, for a diff shown inside other output. */
export function diffText(diff: DesignDiff, labels: DiffLabels, options: { heading?: string | null } = {}): string {
  const heading = options.heading === undefined ? `copperhead diff: ${labels.base} → ${labels.head}` : options.heading;
  const out = heading === null ? [] : [heading];
  if (diff.empty && diff.problems.length === 0) return [...out, "no changes to the design"].join("\n");
  for (const section of sections(diff, TEXT)) {
    if (out.length > 0) out.push("");
    out.push(section.title, ...section.lines.map((l) => `  ${l}`));
  }
  return shown(out.join("\n"));
}

export function diffMarkdown(diff: DesignDiff, labels: DiffLabels, options: { heading?: string } = {}): string {
  const heading = options.heading ?? `### Design changes: ${labels.base} → ${labels.head}`;
  if (diff.empty && diff.problems.length === 0) return `${heading}\n\nNo changes to the design.\n`;
  const out = [heading];
  for (const section of sections(diff, MARKDOWN))
    out.push("", `**${section.title}**`, "", ...section.lines.map((l) => `- ${inertHtml(l)}`));
  return shown(`${out.join("\n")}\n`);
}

/** A few lines for a commit message body: what changed, by kind, each list capped. */
export function diffShort(diff: DesignDiff): string {
  if (diff.empty) return "Design: no changes.";
  const parts: string[] = [];
  const line = (title: string, items: string[]) => {
    if (items.length > 0) parts.push(`- ${title}: ${capped(items, 6)}`);
  };
  line(
    "parts",
    diff.components.map((c) =>
      c.status === "added"
        ? `+${c.ref} (${c.value})`
        : c.status === "removed"
          ? `-${c.ref}`
          : c.status === "moved"
            ? `${c.ref} moved`
            : `${c.ref} ${c.changes.map((f) => f.field).join("/")}`,
    ),
  );
  line(
    "nets",
    diff.nets.map((n) =>
      n.status === "renamed" ? `${n.before} -> ${n.name}` : `${n.status === "added" ? "+" : "-"}${n.name}`,
    ),
  );
  line(
    "pins",
    diff.pins.map((p) => `${p.member} ${p.before} -> ${p.after}`),
  );
  if (diff.board) line("board", boardShort(diff.board));
  line(
    "requirements",
    diff.requirements.map((r) => `${r.id} ${r.status}`),
  );
  line(
    "BOM",
    diff.bom.map((r) =>
      r.status === "added" ? `+${r.ref}` : r.status === "removed" ? `-${r.ref}` : `${r.ref} changed`,
    ),
  );
  if (parts.length === 0)
    line(
      "sheets",
      diff.sheets.map((s) => `${s.path} ${s.status}`),
    );
  return shown(["Design changes:", ...parts].join("\n"));
}

function boardShort(board: BoardDiff): string[] {
  const items = board.footprints.map((f) =>
    f.status === "added" ? `+${f.ref}` : f.status === "removed" ? `-${f.ref}` : `${f.ref} ${f.status}`,
  );
  // Segments and arcs are tracks; vias are counted apart, as a reviewer counts them on the board.
  const tracks = board.tracks.filter((t) => t.kind !== "via");
  const vias = board.tracks.filter((t) => t.kind === "via");
  for (const [label, list] of [
    ["tracks", tracks],
    ["vias", vias],
    ["zones", board.zones],
  ] as const) {
    const added = list.filter((t) => t.status === "added").length;
    const removed = list.length - added;
    if (list.length)
      items.push(`${label} ${[added ? `+${added}` : "", removed ? `-${removed}` : ""].filter(Boolean).join("/")}`);
  }
  // Counted as the long form counts them: the pads of each net, and each pad moved on its own.
  for (const n of board.nets) {
    const pads = `${n.members.length} pad${n.members.length === 1 ? "" : "s"}`;
    items.push(
      n.status === "renamed"
        ? `net ${n.before} -> ${n.name} on ${pads}`
        : `${n.status === "added" ? "+" : "-"}net ${n.name} on ${pads}`,
    );
  }
  if (board.pads.length)
    items.push(`${board.pads.length} pad${board.pads.length === 1 ? "" : "s"} moved to another net`);
  if (board.layers.length) items.push("layers changed");
  if (board.outline) items.push("outline changed");
  if (items.length === 0) items.push(board.status === "changed" ? "file changed" : board.status);
  return items;
}

function sections(diff: DesignDiff, st: Style): Section[] {
  const c = st.code;
  const out: Section[] = [];
  const add = (title: string, lines: string[]) => {
    if (lines.length > 0) out.push({ title, lines });
  };
  add(
    "Parts",
    diff.components.map((x) => componentLine(x, st)),
  );
  add(
    "Nets",
    diff.nets.map((n) => groupLine(n, "pin", st)),
  );
  add(
    "Pins moved to another net",
    diff.pins.map((p) => moveLine(p, c)),
  );
  if (diff.board)
    add(diff.board.status === "changed" ? "Board" : `Board (${diff.board.status})`, boardLines(diff.board, st));
  add(
    "Requirements (docs/SPEC.md)",
    diff.requirements.map((r) => {
      const parts = [
        `${st.mark(r.status)} ${c(r.id)}: ${r.textBefore !== undefined ? `${quote(r.textBefore)} → ${quote(r.text)}` : r.text}`,
      ];
      for (const rule of r.checksAdded) parts.push(`${r.status === "added" ? "" : "+"}check: ${c(rule)}`);
      for (const rule of r.checksRemoved) parts.push(`${r.status === "removed" ? "" : "−"}check: ${c(rule)}`);
      return parts.join("; ");
    }),
  );
  add(
    "BOM rows",
    diff.bom.map(
      (r) =>
        `${st.mark(r.status)} ${c(r.ref)}${r.changes.length ? `: ${r.changes.map((f) => fieldLine(f, c, r.status !== "changed")).join(", ")}` : ""}`,
    ),
  );
  add(
    "Sheets",
    diff.sheets.map((s) => `${st.mark(s.status)} ${c(s.path)} (${s.file})`),
  );
  add("Not compared", diff.problems);
  return out;
}

function quote(text: string): string {
  return `"${text}"`;
}

function code(text: string): string {
  const longest = (text.match(/`+/g) ?? []).reduce((most, run) => Math.max(most, run.length), 0);
  const fence = "`".repeat(longest + 1);
  return `${fence}${longest > 0 ? ` ${text} ` : text}${fence}`;
}

/** A markdown line whose `<` outside code spans cannot open a tag or an HTML comment. */
function inertHtml(line: string): string {
  let out = "";
  let at = 0;
  for (const span of codeSpans(line)) {
    out += line.slice(at, span.start).replaceAll("<", "&lt;") + line.slice(span.start, span.end);
    at = span.end;
  }
  return out + line.slice(at).replaceAll("<", "&lt;");
}

function value(v: string | null, c: Style["code"]): string {
  return v === null ? "(none)" : v === "" ? '""' : c(v);
}

/** `Value 1k → 2k2`; with `only`, the side that exists (`Value 10k`). */
function fieldLine(f: FieldChange, c: Style["code"], only = false): string {
  if (only) return `${f.field} ${value(f.after ?? f.before, c)}`;
  return `${f.field} ${value(f.before, c)} → ${value(f.after, c)}`;
}

function componentLine(x: ComponentChange, st: Style): string {
  const c = st.code;
  const where = `on ${c(x.sheet)}`;
  if (x.status === "added" || x.status === "removed") {
    const pins = x.pins.map((p) => `${p.pin}: ${c(p.net)}`);
    const nets = pins.length ? ` — ${x.status === "removed" ? "was on " : ""}${capped(pins, LIST_LIMIT)}` : "";
    return `${st.mark(x.status)} ${c(x.ref)} ${value(x.value, c)} (${x.libId}${x.footprint ? `, ${x.footprint}` : ""}) ${where}${nets}`;
  }
  const parts = x.changes.map((f) => fieldLine(f, c));
  for (const m of x.moves) {
    const what = [x.moves.length > 1 ? `unit ${m.unit}` : "", x.status === "changed" ? "moved" : ""]
      .filter(Boolean)
      .join(" ");
    parts.push(`${what ? `${what} ` : ""}${placementText(m.before)} → ${placementText(m.after)}`);
  }
  return `${st.mark(x.status)} ${c(x.ref)} ${where}: ${parts.join("; ")}`;
}

function placementText(p: SymbolPlacement): string {
  return `(${p.x}, ${p.y}${p.angle ? `, ${p.angle}°` : ""}${p.mirror ? `, mirror ${p.mirror}` : ""})`;
}

function groupLine(n: GroupChange, what: string, st: Style): string {
  const c = st.code;
  const count = `${n.members.length} ${what}${n.members.length === 1 ? "" : "s"}`;
  if (n.status === "renamed") return `${st.mark("renamed")} ${c(n.before!)} → ${c(n.name)} (${count} stayed together)`;
  return `${st.mark(n.status)} ${c(n.name)} (${count}: ${capped(n.members.map(c), LIST_LIMIT)})`;
}

function moveLine(p: MemberMove, c: Style["code"]): string {
  return `${c(p.member)}: ${c(p.before)} → ${c(p.after)}`;
}

function boardLines(board: BoardDiff, st: Style): string[] {
  const c = st.code;
  const lines: string[] = [];
  for (const f of board.footprints) {
    const at = (p: { x: number; y: number; angle: number; layer: string }) =>
      `(${p.x}, ${p.y}${p.angle ? `, ${p.angle}°` : ""}, ${p.layer})`;
    if (f.status === "added" || f.status === "removed") {
      const pads = f.pads.length
        ? ` — ${f.status === "removed" ? "was on " : ""}${capped(
            f.pads.map((p) => `${p.pin}: ${c(p.net)}`),
            LIST_LIMIT,
          )}`
        : "";
      lines.push(`${st.mark(f.status)} footprint ${c(f.ref)} ${f.libId} at ${at(f.at!)}${pads}`);
    } else {
      const parts: string[] = [];
      if (f.swappedFrom !== undefined) parts.push(`${f.swappedFrom} → ${f.libId}`);
      if (f.move) parts.push(`${f.status === "moved" ? "" : "moved "}${at(f.move.before)} → ${at(f.move.after)}`);
      parts.push(...f.changes.map((x) => fieldLine(x, c)));
      lines.push(`${st.mark(f.status)} footprint ${c(f.ref)}: ${parts.join("; ")}`);
    }
  }
  for (const n of board.nets) lines.push(`${groupLine(n, "pad", st)} on the pads`);
  for (const p of board.pads) lines.push(`pad ${moveLine(p, c)}`);
  lines.push(...copperLines(board.tracks, c));
  for (const z of board.zones) {
    lines.push(
      `${st.mark(z.status)} ${z.ruleArea ? "rule area" : "zone"}${z.net ? ` ${c(z.net)}` : ""}${z.name ? ` "${z.name}"` : ""} on ${z.layers.join(", ")} (${z.corners} corners)`,
    );
  }
  for (const l of board.layers) {
    lines.push(
      l.status === "changed"
        ? `${st.mark("changed")} layer ${c(l.layer)}: ${l.before} → ${l.after}`
        : `${st.mark(l.status)} layer ${c(l.layer)} (${l.before ?? l.after})`,
    );
  }
  if (board.outline) {
    const size = (s: { width: number; height: number } | null) =>
      s ? `${round(s.width)} × ${round(s.height)} mm` : "none";
    lines.push(
      `${st.mark("changed")} outline: ${size(board.outline.before)} → ${size(board.outline.after)} (${board.outline.added} Edge.Cuts strokes added, ${board.outline.removed} removed)`,
    );
  }
  if (lines.length === 0 && board.status === "changed")
    lines.push("the board file changed in nothing compared here (graphics, text or settings)");
  return lines;
}

/** Tracks and vias by net: `+2 segments, −1 via on VBUS (F.Cu)`. */
function copperLines(items: CopperItem[], c: Style["code"]): string[] {
  const byNet = new Map<string, CopperItem[]>();
  for (const item of items) {
    const list = byNet.get(item.net);
    if (list) list.push(item);
    else byNet.set(item.net, [item]);
  }
  const lines: string[] = [];
  for (const [net, list] of byNet) {
    const counts: string[] = [];
    for (const status of ["added", "removed"] as const) {
      for (const kind of ["segment", "arc", "via"] as const) {
        const n = list.filter((t) => t.status === status && t.kind === kind).length;
        if (n) counts.push(`${status === "added" ? "+" : "−"}${n} ${kind}${n === 1 ? "" : "s"}`);
      }
    }
    const layers = [...new Set(list.flatMap((t) => t.layers))].sort().join(", ");
    lines.push(`tracks ${counts.join(", ")} on ${net ? c(net) : "no net"} (${layers})`);
  }
  return lines;
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function capped(items: string[], limit: number): string {
  if (items.length <= limit) return items.join(", ");
  return `${items.slice(0, limit).join(", ")} and ${items.length - limit} more`;
}
