/**
 * One answer to "which net does the caller mean?", shared by every tool that takes a net name.
 *
 * Netlist names of local nets carry their sheet path (`/DATA`, `/Power/VBAT_SENSE`), while
 * people and models write the short name they see on the label (`DATA`). A short name that
 * matches exactly one net's last path component means that net everywhere — reading it,
 * proposing a change to it, renaming it — so `get_net "DATA"` and `rename_net "DATA"` can never
 * disagree. A short name that several sheets use is ambiguous and says which nets it could be.
 */
import { CopperheadError } from "../../errors.ts";
import { suggestion } from "../../util/close-matches.ts";

export type NetLookup =
  | { kind: "found"; name: string }
  | { kind: "ambiguous"; candidates: string[] }
  | { kind: "missing" };

/** Looks `name` up among `nets` (netlist names): an exact name, else a unique short name. */
export function lookupNet(nets: Iterable<string>, name: string): NetLookup {
  const all = [...nets];
  if (all.includes(name)) return { kind: "found", name };
  if (name === "" || name.startsWith("/")) return { kind: "missing" };
  const candidates = all.filter((net) => net.startsWith("/") && net.slice(net.lastIndexOf("/") + 1) === name).sort();
  if (candidates.length === 1) return { kind: "found", name: candidates[0]! };
  if (candidates.length > 1) return { kind: "ambiguous", candidates };
  return { kind: "missing" };
}

/** The netlist name `name` means, or a typed error that lists the candidates or close names. */
export function resolveNet(nets: Iterable<string>, name: string): string {
  const all = [...nets];
  const found = lookupNet(all, name);
  if (found.kind === "found") return found.name;
  if (found.kind === "ambiguous") {
    throw new CopperheadError(
      "not_found",
      `Net name ${name} is ambiguous: ${found.candidates.join(", ")} all end in it.`,
      {
        fix: `Name the net with its sheet path, e.g. ${found.candidates[0]}.`,
        net: name,
        candidates: found.candidates,
      },
    );
  }
  throw new CopperheadError("not_found", `No net named ${name}.`, { fix: suggestion("nets", name, all), net: name });
}
