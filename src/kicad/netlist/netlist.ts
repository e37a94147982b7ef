/**
 * `kicad/netlist/` owns nets: this native netlister, buses, net-name resolution, the components
 * list, and reading KiCad's own netlist. It reads the schematic's views.
 *
 * Native netlister: splits pins into nets, with the same names, as
 * `kicad-cli sch export netlist --format kicadsexpr` (KiCad 9).
 *
 * It follows eeschema's CONNECTION_GRAPH in stages:
 * 1. per sheet instance, geometric subgraphs (kicad/schematic/connectivity.ts);
 * 2. each subgraph picks a driver (global label > power pin > local label > hierarchical
 *    label > sheet pin > pin; ties by name quality, then alphabetically) and so a name;
 * 3. weakly driven subgraphs whose names collide get `_1`, `_2` suffixes; strongly driven
 *    subgraphs on one sheet instance with a common label name merge; bus subgraphs link to the
 *    nets named like their members;
 * 4. sheet pins and hierarchical labels chain subgraphs across the hierarchy and the chain
 *    takes its best driver's name; bus members carry names into the nets they link;
 * 5. a net that is a member of two or more buses on its sheet links those buses' matching
 *    members: every net named like one of them is renamed to it (how the KiCad demos
 *    vme-wren and video join members across differently named buses);
 * 6. nets are the groups of subgraphs with equal final names — which is also how global
 *    labels and power symbols join across sheets.
 *
 * The net list is then filtered like KiCad's exporter: only pins of symbols that are on the
 * board and whose reference does not start with `#`, duplicates (shared pins of multi-unit
 * symbols) removed, nets without pins omitted.
 */
import { naturalCompare } from "../../util/natural-compare.ts";
import { escapeNetName, expandBus, parseBusVector, type BusMember } from "./bus.ts";
import { sheetSubgraphs, type ConnItem, type PlacedPin } from "../schematic/connectivity.ts";
import type { SchematicProject, SheetInstance } from "../schematic/model/hierarchy.ts";
import { unitLetter, unitPins, effectivePin } from "../schematic/model/symbols.ts";

export interface NetNode {
  ref: string;
  pin: string;
  pinfunction?: string;
  pintype?: string;
}

export interface Net {
  name: string;
  nodes: NetNode[];
}

export interface Netlist {
  nets: Net[];
}

/** The netlist as copperhead computes it from the schematic, with what kicad-cli's leaves out. */
export interface DesignNetlist extends Netlist {
  /**
   * The net of every placed pin by `REF.PIN`, power symbols' own pins included (the nets list
   * leaves those out, as kicad-cli's netlist does). kicad-cli reports a violation of a whole
   * net, such as a power net nobody drives, on one of its pins; this names the net.
   */
  pinNets: ReadonlyMap<string, string>;
  /**
   * The net of every sheet pin, by `sheetPinKey`: the net on the parent sheet's side, which a
   * rename follows down into the sheet only when it is the net renamed.
   */
  sheetPinNets: ReadonlyMap<string, string>;
}

/** Key of `sheetPinNets`: the pin `name` of sheet symbol `sheetUuid` placed on sheet instance `parent`. */
export function sheetPinKey(parent: SheetInstance, sheetUuid: string, name: string): string {
  return `${parent.path}\u0000${sheetUuid}\u0000${name}`;
}

/** Driver priorities, lowest to highest (CONNECTION_SUBGRAPH::PRIORITY). */
export const Priority = {
  NONE: 0,
  PIN: 1,
  SHEET_PIN: 2,
  HIER_LABEL: 3,
  LOCAL_LABEL: 4,
  LOCAL_POWER_PIN: 4.5,
  POWER_PIN: 5,
  GLOBAL: 6,
} as const;

/** A resolved connection name: `pathPrefix + name + suffix`, with bus members when a bus. */
interface Conn {
  name: string;
  pathPrefix: string;
  suffix: string;
  members?: BusMember[];
  /** A vector bus (`D[0..7]`), whose members match by index rather than by name. */
  vector?: boolean;
}

function fullName(conn: Conn): string {
  return conn.pathPrefix + conn.name + conn.suffix;
}

/** KiCad's Name(true): the name without the sheet path. */
function localName(conn: Conn): string {
  return conn.name + conn.suffix;
}

function memberConn(conn: Conn, member: BusMember): Conn {
  return { name: member.name, pathPrefix: conn.pathPrefix, suffix: conn.suffix };
}

interface NeighborLink {
  member: BusMember;
  net: Subgraph;
}

/** The other side of a NeighborLink, kept on the net: a bus of its sheet it is a member of. */
interface ParentLink {
  member: BusMember;
  bus: Subgraph;
}

interface Subgraph {
  id: number;
  sheet: SheetInstance;
  items: ConnItem[];
  drivers: ConnItem[];
  /** A no-connect flag or no-connect pin is attached (forces `unconnected-(…)` pin names). */
  noConnect: boolean;
  /** A no-connect flag item (not just an NC pin) is attached. */
  noConnectFlag: boolean;
  driver?: ConnItem;
  priority: number;
  strong: boolean;
  multipleDrivers: boolean;
  conn?: Conn;
  absorbedBy?: Subgraph;
  neighbors: NeighborLink[];
  parents: ParentLink[];
  /**
   * A stand-in net for one member of a bus label, with no items (eeschema's "bus member"
   * subgraphs, generateBusAliasMembers): it lets two buses on a sheet share a member that no
   * wire carries, and merges with a real net of the member's name.
   */
  virtual?: boolean;
  /** Final bus connection of the chain this bus subgraph belongs to, and the sheet of its driver. */
  busConn?: Conn;
  busConnSheet?: SheetInstance;
  /** Name given by a bus member this net is linked to, and the sheet of the bus that gave it. */
  busName?: string;
  busNameSheet?: SheetInstance;
  finalName?: string;
}

/** Builds the netlist of a loaded schematic project. */
export function buildNetlist(project: SchematicProject): DesignNetlist {
  const graph = new ConnectionGraph(project);
  return graph.netlist();
}

class ConnectionGraph {
  private readonly subgraphs: Subgraph[] = [];
  private readonly byName = new Map<string, Subgraph[]>();
  /** Bus expansions by label text; designs repeat the same few bus labels many times. */
  private readonly buses = new Map<string, { members?: BusMember[]; vector: boolean }>();
  /** Net names of labels and sheet pins (escaped text), computed once per item. */
  private readonly itemNames = new Map<object, string>();

  constructor(private readonly project: SchematicProject) {
    let id = 0;
    const perSheet = sheetSubgraphs(project.instances, project.projectName);
    for (const instance of project.instances) {
      for (const items of perSheet.get(instance)!) {
        const noConnectFlag = items.some((i) => i.kind === "noConnect");
        this.subgraphs.push({
          id: id++,
          sheet: instance,
          items,
          drivers: items.filter(isDriverItem),
          noConnect: noConnectFlag || items.some((i) => i.kind === "pin" && i.pin.type === "no_connect"),
          noConnectFlag,
          priority: Priority.NONE,
          strong: false,
          multipleDrivers: false,
          neighbors: [],
          parents: [],
        });
      }
    }
    for (const sg of this.subgraphs) this.resolveDrivers(sg);
    for (const sg of this.driven()) this.cacheName(sg);
    this.addBusMemberSubgraphs();
    this.processSubgraphs();
    this.propagate();
  }

  /**
   * One virtual net per net member of every bus label (members that are themselves vectors
   * inside a group get none), named by the member and placed on the label's sheet, after the
   * real subgraphs so that a real net of the same name absorbs it.
   */
  private addBusMemberSubgraphs() {
    let id = this.subgraphs.length;
    for (const sg of this.driven()) {
      for (const item of sg.drivers) {
        if (item.kind !== "label") continue;
        const { members, vector } = this.bus(this.itemName(item.label, item.label.text));
        if (!members) continue;
        for (const member of members) {
          if (!vector && member.vectorIndex !== undefined) continue;
          this.subgraphs.push({
            id: id++,
            sheet: sg.sheet,
            items: [],
            drivers: [],
            noConnect: false,
            noConnectFlag: false,
            priority: Priority.NONE,
            strong: true,
            multipleDrivers: false,
            neighbors: [],
            parents: [],
            virtual: true,
            conn: { name: member.name, pathPrefix: sg.sheet.humanPath, suffix: "" },
          });
        }
      }
    }
  }

  private makeConn(name: string, pathPrefix: string): Conn {
    const { members, vector } = this.bus(name);
    return { name, pathPrefix, suffix: "", members, vector };
  }

  private bus(name: string): { members?: BusMember[]; vector: boolean } {
    let info = this.buses.get(name);
    if (!info) {
      const members = expandBus(name, this.project.busAliases);
      info = { members, vector: members !== undefined && parseBusVector(name) !== undefined };
      this.buses.set(name, info);
    }
    return info;
  }

  /** The escaped net name of a label's or sheet pin's text. */
  private itemName(owner: object, text: string): string {
    let name = this.itemNames.get(owner);
    if (name === undefined) this.itemNames.set(owner, (name = escapeNetName(text)));
    return name;
  }

  private driven(): Subgraph[] {
    return this.subgraphs.filter((sg) => sg.conn && !sg.absorbedBy);
  }

  private cacheName(sg: Subgraph) {
    const conn = sg.conn!;
    push(this.byName, fullName(conn), sg);
    // Vector buses also register their bare prefix, so `D[0..3]` and `D[4..7]` weakly driven
    // on different sheets are still seen as a conflict.
    if (conn.vector) {
      push(this.byName, fullName(conn).split("[")[0] + "[]", sg);
    }
  }

  // --- Stage 2: drivers -------------------------------------------------------------------

  private resolveDrivers(sg: Subgraph) {
    // A bus member stand-in keeps its name until it absorbs something that drives it.
    if (sg.virtual && sg.drivers.length === 0) return;
    let highest = -1;
    let candidates: ConnItem[] = [];
    const strongDrivers: ConnItem[] = [];
    for (const item of sg.drivers) {
      const p = driverPriority(item);
      if (p === Priority.PIN && item.kind === "pin" && !inNetlist(item.pin)) continue;
      if (p === Priority.NONE) continue;
      if (p >= Priority.HIER_LABEL) strongDrivers.push(item);
      if (p > highest) {
        candidates = [item];
        highest = p;
      } else if (p === highest) candidates.push(item);
    }
    sg.priority = Math.max(highest, Priority.NONE);
    sg.strong = highest >= Priority.HIER_LABEL;
    if (strongDrivers.length > 1) sg.multipleDrivers = true;
    if (candidates.length === 0) {
      sg.driver = undefined;
      sg.conn = undefined;
      return;
    }
    sg.driver = candidates.length === 1 ? candidates[0]! : this.bestCandidate(sg, candidates);
    if (sg.strong) sg.drivers = strongDrivers;
    sg.conn = this.makeConn(this.driverName(sg, sg.driver), driverPathPrefix(sg.sheet, sg.driver));
  }

  /**
   * The first of equally ranked driver candidates in eeschema's order: a bus that contains the
   * other's members, a power symbol's pin over another pin, an output sheet pin over others, a
   * name that is not pad-derived, then the alphabetically first name.
   */
  private bestCandidate(sg: Subgraph, candidates: ConnItem[]): ConnItem {
    const keyed = candidates.map((item) => {
      const name = this.driverName(sg, item);
      const members = this.bus(name).members;
      return {
        item,
        name,
        members: members && new Set(members.map((m) => m.name)),
        power: item.kind === "pin" && item.pin.symbol.lib?.power !== undefined,
        output: item.kind === "sheetPin" && item.pin.shape === "output",
        low: name.includes("-Pad"),
      };
    });
    const contains = (sup: Set<string>, sub: Set<string>) => {
      for (const m of sub) if (!sup.has(m)) return false;
      return true;
    };
    keyed.sort((a, b) => {
      if (a.members && b.members) {
        const aHasB = contains(a.members, b.members);
        const bHasA = contains(b.members, a.members);
        if (aHasB && !bHasA) return -1;
        if (bHasA && !aHasB) return 1;
      }
      if (a.item.kind === "pin" && b.item.kind === "pin" && a.power !== b.power) return a.power ? -1 : 1;
      if (a.item.kind === "sheetPin" && b.item.kind === "sheetPin" && a.output !== b.output) return a.output ? -1 : 1;
      if (a.low !== b.low) return a.low ? 1 : -1;
      return compareStrings(a.name, b.name);
    });
    return keyed[0]!.item;
  }

  /** GetNameForDriver: the unprefixed name a driver item gives its subgraph. */
  private driverName(sg: Subgraph, item: ConnItem): string {
    switch (item.kind) {
      case "label":
        return this.itemName(item.label, item.label.text);
      case "sheetPin":
        return this.itemName(item.pin, item.pin.name);
      case "pin":
        return defaultNetName(item.pin, sg.noConnect);
      default:
        return "";
    }
  }

  // --- Stage 3: name conflicts, same-sheet merging, bus neighbours --------------------------

  private processSubgraphs() {
    const invalidated = new Set<Subgraph>();
    const driven = this.driven();
    // Subgraphs by sheet and by every name they answer to (their own, and their other drivers'
    // when they have several), so that matching a name looks at the few subgraphs that carry
    // it instead of every subgraph of the sheet.
    const index = new Map<SheetInstance, Map<string, Subgraph[]>>();
    const indexAs = (sg: Subgraph, owner: Subgraph) => {
      let names = index.get(owner.sheet);
      if (!names) index.set(owner.sheet, (names = new Map()));
      push(names, localName(sg.conn!), owner);
      for (const d of sg.drivers) {
        if (d === sg.driver || d.kind === "sheetPin") continue;
        if (d.kind === "pin") {
          if (isPowerPin(d.pin)) push(names, defaultNetName(d.pin, false), owner);
        } else push(names, this.driverName(sg, d), owner);
      }
    };
    for (const sg of driven) indexAs(sg, sg);

    for (const sg of driven) {
      if (sg.absorbedBy) continue;
      const conn = sg.conn!;
      if (!sg.strong) {
        const name = fullName(conn);
        let vec = this.byName.get(name) ?? [];
        if (vec.length <= 1 && conn.vector) vec = this.byName.get(name.split("[")[0] + "[]") ?? vec;
        if (vec.length > 1) {
          let n = 1;
          let renamed = name;
          do {
            conn.suffix = `_${n++}`;
            renamed = fullName(conn);
          } while (this.byName.has(renamed));
          remove(vec, sg);
          push(this.byName, renamed, sg);
        } else if (sg.driver?.kind === "sheetPin") {
          // A uniquely named sheet pin is promoted to a strong driver, unless a global of the
          // same name on this sheet would then short it through implicit label merging.
          const conflict = (this.byName.get(localName(conn)) ?? []).some((c) => c.sheet === sg.sheet);
          if (!conflict) sg.strong = true;
        }
      }
      if (!sg.strong) continue;

      const names = index.get(sg.sheet)!;
      const toCheck: { conn: Conn; member?: BusMember }[] = [{ conn }];
      const addSecondaries = (owner: Subgraph) => {
        for (const item of owner.items) {
          if (item === owner.driver) continue;
          const c = this.defaultConn(owner, item);
          if (!c) continue;
          if (!!c.members !== !!owner.conn!.members) continue;
          if (localName(c) === localName(owner.conn!)) continue;
          toCheck.push({ conn: c });
        }
      };
      addSecondaries(sg);
      const checked = new Set<string>();
      for (let i = 0; i < toCheck.length; i++) {
        const { conn: member, member: busMember } = toCheck[i]!;
        const key = `${localName(member)}|${busMember ? "m" : "c"}`;
        if (checked.has(key)) continue;
        checked.add(key);
        if (member.members) for (const m of member.members) toCheck.push({ conn: memberConn(member, m), member: m });
        const testName = localName(member);
        const seen = new Set<Subgraph>();
        for (const candidate of names.get(testName) ?? []) {
          if (candidate.absorbedBy || candidate === sg || !candidate.strong || seen.has(candidate)) continue;
          seen.add(candidate);
          let match = localName(candidate.conn!) === testName;
          if (!match && candidate.multipleDrivers) {
            match = candidate.drivers.some((d) => {
              if (d === candidate.driver || d.kind === "sheetPin") return false;
              if (d.kind === "pin") return isPowerPin(d.pin) && defaultNetName(d.pin, false) === testName;
              return this.driverName(candidate, d) === testName;
            });
          }
          if (!match) continue;
          if (conn.members && !candidate.conn!.members) {
            if (busMember) {
              sg.neighbors.push({ member: busMember, net: candidate });
              candidate.parents.push({ member: busMember, bus: sg });
            }
          } else if (!conn.members || !!candidate.conn!.members) {
            addSecondaries(candidate);
            this.absorb(sg, candidate);
            // What the absorbed subgraph answered to, the absorbing one now answers to.
            indexAs(candidate, sg);
            invalidated.add(sg);
          }
        }
      }
    }
    for (const sg of invalidated) {
      if (sg.absorbedBy) continue;
      this.resolveDrivers(sg);
    }
  }

  /** A possible driver's own connection (getDefaultConnection): labels and power pins only. */
  private defaultConn(sg: Subgraph, item: ConnItem): Conn | undefined {
    if (item.kind === "label") return this.makeConn(this.driverName(sg, item), driverPathPrefix(sg.sheet, item));
    if (item.kind === "pin" && isPowerPin(item.pin))
      return this.makeConn(this.driverName(sg, item), driverPathPrefix(sg.sheet, item));
    return undefined;
  }

  private absorb(into: Subgraph, other: Subgraph) {
    into.items.push(...other.items);
    for (const d of other.drivers) if (!into.drivers.includes(d)) into.drivers.push(d);
    into.neighbors.push(...other.neighbors);
    into.parents.push(...other.parents);
    into.multipleDrivers ||= other.multipleDrivers;
    into.noConnect ||= other.noConnect;
    into.noConnectFlag ||= other.noConnectFlag;
    other.absorbedBy = into;
  }

  // --- Stage 4: hierarchy and bus members ---------------------------------------------------

  private propagate() {
    const driven = this.driven();
    this.promoteGlobalSecondaries(driven);
    const chains = this.hierarchyChains(driven);

    // Bus chains first: their final member names feed the nets linked to them.
    for (const chain of chains) {
      if (!chain[0]!.conn!.members) continue;
      const best = bestOfChain(chain, (sg) => fullName(sg.conn!));
      for (const sg of chain) {
        sg.finalName = fullName(best.conn!);
        sg.busConn = best.conn;
        sg.busConnSheet = best.sheet;
      }
    }
    // Nets linked to bus members take the member's name, unless a power pin or global label
    // drives them, in which case the member (everywhere in the bus chain) takes theirs.
    const memberOverride = new Map<string, string>();
    const assignments: { net: Subgraph; name: string; from: SheetInstance }[] = [];
    for (const bus of driven) {
      const busConn = bus.busConn ?? bus.conn!;
      if (!busConn.members) continue;
      const links = [...bus.neighbors].sort((a, b) => compareStrings(a.member.name, b.member.name));
      for (const link of links) {
        const net = representative(link.net);
        const match = matchBusMember(busConn, link.member);
        if (!match) continue;
        const memberName = fullName(memberConn(busConn, match));
        if (net.priority >= Priority.POWER_PIN) memberOverride.set(memberName, fullName(net.conn!));
        else assignments.push({ net, name: memberName, from: bus.busConnSheet ?? bus.sheet });
      }
    }
    // A net in two buses keeps the first name it gets, except that a name brought in from
    // another sheet (through a bus renamed up the hierarchy) wins over one from its own sheet,
    // as eeschema's propagation never renames a net a second time from another sheet.
    for (const { net, name, from } of assignments) {
      const fromOwnSheet = from === net.sheet;
      if (net.busName !== undefined && (fromOwnSheet || net.busNameSheet !== net.sheet)) continue;
      net.busName = memberOverride.get(name) ?? name;
      net.busNameSheet = from;
    }

    for (const chain of chains) {
      if (chain[0]!.conn!.members) continue;
      const best = bestOfChain(chain, (sg) => sg.busName ?? fullName(sg.conn!));
      const name = best.busName ?? fullName(best.conn!);
      for (const sg of chain) sg.finalName = name;
    }

    this.linkBusesThroughSharedMembers(driven, memberOverride);

    // A weakly driven net with a single pin is an unconnected pin.
    for (const sg of driven) {
      if (!sg.strong && sg.drivers.length === 1 && sg.driver?.kind === "pin") {
        sg.finalName = defaultNetName(sg.driver.pin, true);
      }
    }
  }

  /**
   * A net that two or more buses of its sheet count as a member ties those buses together:
   * each bus's matching member takes the net's name, and so does every net that had the
   * member's old name (eeschema's pass over subgraphs with several bus parents).
   */
  private linkBusesThroughSharedMembers(driven: Subgraph[], memberOverride: Map<string, string>) {
    const byFinalName = new Map<string, Subgraph[]>();
    for (const sg of driven) push(byFinalName, sg.finalName!, sg);
    for (const sg of driven) {
      if (sg.conn!.members || new Set(sg.parents.map((p) => representative(p.bus))).size < 2) continue;
      for (const link of sg.parents) {
        const bus = representative(link.bus);
        const busConn = bus.busConn ?? bus.conn!;
        const match = matchBusMember(busConn, link.member);
        if (!match) continue;
        const memberName = fullName(memberConn(busConn, match));
        const oldName = memberOverride.get(memberName) ?? memberName;
        const name = sg.finalName!;
        if (oldName === name) continue;
        memberOverride.set(memberName, name);
        const renamed = byFinalName.get(oldName);
        if (!renamed) continue;
        byFinalName.delete(oldName);
        for (const other of renamed) other.finalName = name;
        for (const other of renamed) push(byFinalName, name, other);
      }
    }
  }

  /**
   * A globally driven subgraph carrying a second, differently named global (say labels `A`
   * and `B` on one wire) renames every other global subgraph driven by `B` to `A`, so all of
   * them end up in one net.
   */
  private promoteGlobalSecondaries(driven: Subgraph[]) {
    const globals = driven.filter((sg) => sg.priority >= Priority.POWER_PIN);
    for (const sg of globals) {
      if (!sg.multipleDrivers) continue;
      for (const driver of sg.drivers) {
        if (driver === sg.driver) continue;
        const secondary = this.driverName(sg, driver);
        if (secondary === fullName(sg.conn!)) continue;
        const secondaryIsGlobal = driverPriority(driver) >= Priority.POWER_PIN;
        for (const candidate of globals) {
          if (candidate === sg || (!secondaryIsGlobal && candidate.sheet !== sg.sheet)) continue;
          if (candidate.drivers.some((d) => this.driverName(candidate, d) === secondary))
            candidate.conn = { ...sg.conn! };
        }
      }
    }
  }

  /** Connected groups of subgraphs through sheet pin ↔ hierarchical label pairs. */
  private hierarchyChains(driven: Subgraph[]): Subgraph[][] {
    const index = new Map<Subgraph, number>();
    driven.forEach((sg, i) => index.set(sg, i));
    const parent = driven.map((_, i) => i);
    const find = (i: number): number => {
      while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
      return i;
    };
    // Strongly driven subgraphs by sheet and hierarchical label name.
    const ports = new Map<SheetInstance, Map<string, Subgraph[]>>();
    for (const sg of driven) {
      if (!sg.strong) continue;
      for (const item of sg.items) {
        if (item.kind !== "label" || item.label.kind !== "hierarchical") continue;
        let names = ports.get(sg.sheet);
        if (!names) ports.set(sg.sheet, (names = new Map()));
        const list = names.get(this.itemName(item.label, item.label.text));
        if (list?.[list.length - 1] === sg) continue;
        push(names, this.itemName(item.label, item.label.text), sg);
      }
    }
    for (const sg of driven) {
      for (const item of sg.items) {
        if (item.kind !== "sheetPin") continue;
        const childInstance = sg.sheet.children.find((c) => c.sheet === item.sheet);
        if (!childInstance) continue;
        for (const candidate of ports.get(childInstance)?.get(this.itemName(item.pin, item.pin.name)) ?? []) {
          parent[find(index.get(candidate)!)] = find(index.get(sg)!);
        }
      }
    }
    const groups = new Map<number, Subgraph[]>();
    driven.forEach((sg, i) => push(groups, find(i), sg));
    return [...groups.values()];
  }

  // --- Stage 5: nets ------------------------------------------------------------------------

  netlist(): DesignNetlist {
    const nets = new Map<string, Subgraph[]>();
    for (const sg of this.driven()) push(nets, sg.finalName ?? fullName(sg.conn!), sg);
    const out: Net[] = [];
    const pinNets = new Map<string, string>();
    const sheetPinNets = new Map<string, string>();
    for (const [name, subgraphs] of nets) {
      const pins: PlacedPin[] = [];
      const seen = new Set<string>();
      for (const sg of subgraphs) {
        for (const item of sg.items) {
          if (item.kind === "sheetPin") sheetPinNets.set(sheetPinKey(sg.sheet, item.sheet.uuid, item.pin.name), name);
          if (item.kind !== "pin") continue;
          pinNets.set(`${item.pin.reference}.${item.pin.lib.number}`, name);
          if (!item.pin.symbol.onBoard) continue;
          const key = `${item.pin.reference}\u0000${item.pin.lib.number}`;
          if (seen.has(key)) continue;
          seen.add(key);
          pins.push(item.pin);
        }
      }
      const hasFlag = subgraphs.some((sg) => sg.noConnectFlag);
      const stacked =
        pins.length <= 1 ||
        pins.every(
          (p) =>
            p.symbol === pins[0]!.symbol &&
            p.at.x === pins[0]!.at.x &&
            p.at.y === pins[0]!.at.y &&
            p.lib.name === pins[0]!.lib.name,
        );
      const nodes: NetNode[] = [];
      for (const pin of pins) {
        if (pin.reference.startsWith("#")) continue;
        const node: NetNode = { ref: pin.reference, pin: pin.lib.number };
        if (pin.name) node.pinfunction = pin.name;
        node.pintype = hasFlag && stacked ? `${pin.type}+no_connect` : pin.type;
        nodes.push(node);
      }
      if (nodes.length === 0) continue;
      nodes.sort((a, b) => naturalCompare(a.ref, b.ref) || naturalCompare(a.pin, b.pin));
      out.push({ name, nodes });
    }
    out.sort((a, b) => naturalCompare(a.name, b.name));
    return { nets: out, pinNets, sheetPinNets };
  }
}

/** The subgraph that (through any chain of absorptions) holds `sg`'s items. */
function representative(sg: Subgraph): Subgraph {
  while (sg.absorbedBy) sg = sg.absorbedBy;
  return sg;
}

/**
 * The driver a hierarchy chain takes its name from (propagateToNeighbors): a power pin or
 * global label wins outright; otherwise strong drivers beat weak ones, then higher priority,
 * then the shallower sheet, then the alphabetically first name.
 */
function bestOfChain(chain: Subgraph[], nameOf: (sg: Subgraph) => string): Subgraph {
  const rank = (sg: Subgraph): [number, number, number, number] => [
    sg.priority >= Priority.POWER_PIN ? 1 : 0,
    sg.priority >= Priority.HIER_LABEL ? 1 : 0,
    sg.priority,
    -sg.sheet.depth,
  ];
  let best = chain[0]!;
  for (const sg of chain.slice(1)) {
    const a = rank(sg);
    const b = rank(best);
    let cmp = 0;
    for (let i = 0; i < a.length && cmp === 0; i++) cmp = a[i]! - b[i]!;
    if (cmp > 0 || (cmp === 0 && nameOf(sg) < nameOf(best))) best = sg;
  }
  return best;
}

/** matchBusMember: vector buses match members by index (names may differ), groups by name. */
function matchBusMember(bus: Conn, search: BusMember): BusMember | undefined {
  if (bus.vector) return bus.members!.find((m) => m.vectorIndex === search.vectorIndex);
  return bus.members!.find((m) => m.local === search.local);
}

function isDriverItem(item: ConnItem): boolean {
  if (item.kind === "label" || item.kind === "sheetPin") return true;
  if (item.kind === "pin") return isPowerPin(item.pin) || !item.pin.reference.endsWith("?");
  return false;
}

function isGlobalPowerPin(pin: PlacedPin): boolean {
  return pin.type === "power_in" && (pin.lib.hidden || pin.symbol.lib?.power === "global");
}

function isLocalPowerPin(pin: PlacedPin): boolean {
  return pin.type === "power_in" && pin.symbol.lib?.power === "local" && !pin.lib.hidden;
}

function isPowerPin(pin: PlacedPin): boolean {
  return isGlobalPowerPin(pin) || isLocalPowerPin(pin);
}

/** Symbols whose pins may name a net and appear in the netlist. */
function inNetlist(pin: PlacedPin): boolean {
  return pin.symbol.onBoard && !pin.reference.startsWith("#");
}

export function driverPriority(item: ConnItem): number {
  switch (item.kind) {
    case "sheetPin":
      return Priority.SHEET_PIN;
    case "label":
      return item.label.kind === "global"
        ? Priority.GLOBAL
        : item.label.kind === "hierarchical"
          ? Priority.HIER_LABEL
          : Priority.LOCAL_LABEL;
    case "pin":
      if (isGlobalPowerPin(item.pin)) return Priority.POWER_PIN;
      if (isLocalPowerPin(item.pin)) return Priority.LOCAL_POWER_PIN;
      return Priority.PIN;
    default:
      return Priority.NONE;
  }
}

/** Sheet path prefix a driver puts in front of its name (SCH_CONNECTION::recacheName). */
function driverPathPrefix(sheet: SheetInstance, item: ConnItem): string {
  if (item.kind === "label") return item.label.kind === "global" ? "" : sheet.humanPath;
  if (item.kind === "sheetPin") return sheet.humanPath;
  if (item.kind === "pin") return isLocalPowerPin(item.pin) ? sheet.humanPath : "";
  return sheet.humanPath;
}

/**
 * SCH_PIN::GetDefaultNetName: the name a pin gives a net nothing else names.
 * Power pins give the power symbol's Value (or, on ordinary symbols, the pin name). Other pins
 * give `Net-(R1-Pad1)`, or `Net-(U1A-SDA)` when the pin has a name distinct from its number
 * (with the unit letter, since names can repeat across units, and `-PadN` when the name repeats
 * on the unit); `unconnected-(…)` replaces `Net-(` when a no-connect is attached.
 */
export function defaultNetName(pin: PlacedPin, forceNoConnect: boolean): string {
  if (isPowerPin(pin)) {
    if (pin.symbol.lib?.power) return escapeNetName(pin.symbol.value);
    return escapeNetName(pin.name);
  }
  const unconnected = forceNoConnect || pin.type === "no_connect";
  let name = unconnected ? "unconnected-(" : "Net-(";
  const number = pin.lib.number;
  if (pin.reference.endsWith("?")) return `${name}${pin.symbol.uuid}-Pad${number})`;
  const shownName = pin.name;
  if (shownName && shownName !== number) {
    const unitCount = pin.symbol.lib?.unitCount ?? 1;
    const ref = unitCount > 1 ? pin.reference + unitLetter(pin.unit) : pin.reference;
    const hasMultiple = unitPins(pin.symbol, pin.unit).some((other) => {
      const o = effectivePin(pin.symbol, other);
      return o.name === shownName && other.number !== number && unconnected === (o.type === "no_connect");
    });
    name += `${ref}-${escapeNetName(shownName)}`;
    if (unconnected || hasMultiple) name += `-Pad${escapeNetName(number)}`;
    return `${name})`;
  }
  return `${name}${pin.reference}-Pad${escapeNetName(number)})`;
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function remove<V>(list: V[], value: V) {
  const i = list.indexOf(value);
  if (i >= 0) list.splice(i, 1);
}
