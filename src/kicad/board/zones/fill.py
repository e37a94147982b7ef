"""Refills zones of a board with KiCad's own filler (pcbnew.ZONE_FILLER).

Run by refill.ts under KiCad's Python, which bundles this file into the copperhead binary as
text:

    python3 fill.py BOARD SPEC RESULT [SAVED_COPY]

BOARD is a temp copy of the edited board; SPEC is a JSON file shaped as `FillSpec` in
refill.ts (keep the two in step); RESULT is where the fills are written, shaped as
`FilledZone[]` there, points in nanometres; with SAVED_COPY, the filled board is also saved
there, for comparisons. Results go to a file because KiCad's bindings print warnings on stdout.

With a `change` in the spec, KiCad fills the zones only inside a window around the change, and
that fill replaces the saved one there; outside it the saved fill stays (refill.ts's
`FillChange` says why).
"""
import sys, json, pcbnew
with open(sys.argv[2]) as spec_file:
    spec = json.load(spec_file)
wanted = set(spec["ids"])
change = spec.get("change")

def rectangles(boxes):
    shape = pcbnew.SHAPE_POLY_SET()
    for x1, y1, x2, y2 in boxes:
        outline = shape.NewOutline()
        for x, y in ((x1, y1), (x2, y1), (x2, y2), (x1, y2)):
            shape.Append(int(x), int(y), outline)
    shape.Simplify()
    return shape

def outlines(fills):
    shape = pcbnew.SHAPE_POLY_SET()
    for pts in fills:
        outline = shape.NewOutline()
        for i in range(0, len(pts), 2):
            shape.Append(pts[i], pts[i + 1], outline)
    return shape

def slit_cycles(pts):
    """The closed paths of a fractured outline (flat x, y list) with its slits taken out. KiCad
    joins each hole to the outline by a slit, two edges running both ways between the same two
    points; without each such pair, the edges left close into the outline and its holes, every
    point where it was. Only the edges matter here (which point follows which is chosen freely):
    the area each path encloses, and so the shape, are those of the edges."""
    points = [(pts[i], pts[i + 1]) for i in range(0, len(pts), 2)]
    edges = {}
    for a, b in zip(points, points[1:] + points[:1]):
        if a == b:
            continue
        if edges.get((b, a)):
            edges[(b, a)] -= 1
        else:
            edges[(a, b)] = edges.get((a, b), 0) + 1
    nexts = {}
    for (a, b), count in edges.items():
        nexts.setdefault(a, []).extend([b] * count)
    cycles = []
    for start in list(nexts):
        while nexts[start]:
            cycle, at = [start], nexts[start].pop()
            while at != start:
                cycle.append(at)
                at = nexts[at].pop()
            cycles.append(cycle)
    return cycles

def signed_area(cycle):
    return sum(x1 * y2 - x2 * y1 for (x1, y1), (x2, y2) in zip(cycle, cycle[1:] + cycle[:1])) / 2

def unslit(fills):
    """Saved fills (fractured outlines) as outlines with holes, every point where it was. A
    boolean operation on a fractured plane costs KiCad seconds (vme-wren's planes: 2.6 s for one
    subtraction, against 0.1 s with holes), and KiCad's own Unfracture merges the outline again,
    which moves points by nanometres (see the merge below). A fill whose paths do not come out
    as one outline and its holes is returned fractured."""
    shape = pcbnew.SHAPE_POLY_SET()
    for pts in fills:
        cycles = sorted(slit_cycles(pts), key=lambda c: -abs(signed_area(c)))
        if not cycles:
            continue
        outer = signed_area(cycles[0]) > 0
        if any((signed_area(c) > 0) == outer for c in cycles[1:]):
            return outlines(fills)
        outline = shape.NewOutline()
        for x, y in cycles[0]:
            shape.Append(x, y, outline)
        for cycle in cycles[1:]:
            hole = shape.NewHole(outline)
            for x, y in cycle:
                shape.Append(x, y, outline, hole)
    return shape

def layer_name(layer):
    return pcbnew.BOARD.GetStandardLayerName(layer)

def relief_boxes(board, zones):
    """Per zone to fill, for each pad of its net: the box its connection to the zone takes up
    (the pad, its thermal gap, and spokes reaching a minimum-width strip of fill past the gap),
    and the box of the relief proper (the pad and its gap), each with the larger of the zone's
    and the pad's own gap and spoke width."""
    per_zone = []
    for z in zones:
        boxes = []
        per_zone.append(boxes)
        layers = set(z.GetLayerSet().Seq())
        for pad in board.GetPads():
            if pad.GetNetCode() != z.GetNetCode() or not any(pad.IsOnLayer(l) for l in layers):
                continue
            gap = max(z.GetThermalReliefGap(), pad.GetLocalThermalGapOverride() or 0)
            spoke = max(z.GetThermalReliefSpokeWidth(), pad.GetLocalThermalSpokeWidthOverride() or 0)
            b = pad.GetBoundingBox()
            core = [b.GetLeft() - gap, b.GetTop() - gap, b.GetRight() + gap, b.GetBottom() + gap]
            boxes.append((grown([core], spoke + z.GetMinThickness())[0], core))
    return per_zone

def crosses(box, shape):
    """Whether the edge of `shape` runs through `box`: part of it inside, part outside."""
    piece = rectangles([box])
    outside = piece.CloneDropTriangulation()
    outside.BooleanSubtract(shape)
    piece.BooleanIntersection(shape)
    return piece.Area() > SLIVER and outside.Area() > SLIVER

def inside(box, shape):
    """Whether `box` lies wholly inside `shape`."""
    piece = rectangles([box])
    piece.BooleanSubtract(shape)
    return piece.Area() < SLIVER

def overlaps(box, boxes):
    x1, y1, x2, y2 = box
    return any(x1 < b[2] and b[0] < x2 and y1 < b[3] and b[1] < y2 for b in boxes)

def connections(window, reliefs, reached, bound):
    """The window's rectangles grown by the pad connections the change reaches, and per zone id
    the pad connections it leaves as saved: a connection is reached when it overlaps `reached`
    (the change's copper and the fill it can move) on one of its zone's layers, or when its
    relief overlaps the relief of a reached one of the same zone (KiCad draws the two as one),
    as far as `bound`. Each is taken at most once, so this ends. Also returns, per zone id, the
    connections taken."""
    # Boolean operations cost: a board has thousands of pads, and most are nowhere near.
    near = bound_boxes(bound)
    lefts, takens = {}, {}
    for z, pairs in zip(zones, reliefs):
        layers = {layer_name(l) for l in z.GetLayerSet().Seq()}
        on_zone = [r["box"] for r in reached if r["layers"] == "all" or layers.intersection(r["layers"])]
        left = [p for p in pairs if overlaps(p[0], near)]
        fresh = [p for p in left if overlaps(p[0], on_zone) and inside(p[0], bound)]
        mine = []
        while fresh:
            left = [p for p in left if p not in fresh]
            mine += [p[0] for p in fresh]
            cores = [p[1] for p in fresh]
            fresh = [p for p in left if overlaps(p[1], cores) and inside(p[0], bound)]
        takens[z.m_Uuid.AsString()] = mine
        lefts[z.m_Uuid.AsString()] = [p[0] for p in left]
    window = window + [box for mine in takens.values() for box in mine]
    return window, {zid: [b for b in left if overlaps(b, window)] for zid, left in lefts.items()}, takens

def window_shape(window, kept, taken):
    """The window as one zone's fill is merged in it: its rectangles but the connections kept,
    and every connection taken, whole, where a kept one's box overlaps it (a new pad on a large
    custom pad of its net, whose box is too big to take in: custom_pads_test's antenna)."""
    shape = rectangles(window)
    if kept:
        shape.BooleanSubtract(rectangles(kept))
        if taken:
            shape.BooleanAdd(rectangles(taken))
    return shape

def bound_boxes(shape):
    """The bounding boxes of the outlines of `shape`."""
    out = []
    for i in range(shape.OutlineCount()):
        b = shape.COutline(i).BBox()
        out.append([b.GetLeft(), b.GetTop(), b.GetRight(), b.GetBottom()])
    return out

def grown(boxes, by):
    return [[x1 - by, y1 - by, x2 + by, y2 + by] for x1, y1, x2, y2 in boxes]

def fill(board, zones):
    """Fills the zones asked for, as KiCad fills them (cut to the fill area with a change)."""
    modes = {}
    if change:
        # The copy carries no fills (reading a large board's fills costs KiCad a minute): other
        # zones get theirs near the change from the spec, and the zones to refill are cut to the
        # fill area. Fills come fractured (outlines with slits), as KiCad keeps them.
        for z in board.Zones():
            given = change["fills"].get(z.m_Uuid.AsString())
            if given is None or z.m_Uuid.AsString() in wanted:
                continue
            for layer in z.GetLayerSet().Seq():
                shape = outlines([f["pts"] for f in given if f["layer"] == layer_name(layer)])
                shape.BooleanIntersection(reach)
                shape.Fracture()
                z.SetFilledPolysList(layer, shape)
            z.SetIsFilled(True)
        # A piece the fill area's edge cuts off from the rest of its pour is no island: KiCad
        # keeps every piece here, and `removed` says which go as the zone says.
        for z in zones:
            modes[z.m_Uuid.AsString()] = (z.GetIslandRemovalMode(), z.GetMinIslandArea())
            z.SetIslandRemovalMode(pcbnew.ISLAND_REMOVAL_MODE_NEVER)
            # A hatch's grid may follow the zone's outline: a hatched zone is filled whole.
            if z.GetFillMode() != pcbnew.ZONE_FILL_MODE_HATCH_PATTERN:
                z.Outline().BooleanIntersection(area)
                z.CacheBoundingBox()
    board.BuildConnectivity()
    pcbnew.ZONE_FILLER(board).Fill(zones)
    return modes

def removed(piece, mode, min_area, joined_outside):
    """Whether KiCad would remove this island of the cut fill: it lies wholly inside the fill
    area, or it reaches the area's edge where the saved fill (which joins its net outside the
    area; `joined_outside()` makes it, only for such an island) does not run into it."""
    if not (mode == pcbnew.ISLAND_REMOVAL_MODE_ALWAYS or (mode == pcbnew.ISLAND_REMOVAL_MODE_AREA and piece.Area() < min_area)):
        return False
    rest = pcbnew.SHAPE_POLY_SET()
    rest.AddOutline(piece)
    rest.BooleanSubtract(inner)
    if rest.Area() < SLIVER:
        return True
    rest.BooleanIntersection(joined_outside())
    return rest.Area() < SLIVER

def saved_joined_outside(mine):
    """The saved fill that joins the net (no island), near the fill area's edge."""
    shape = outlines([f["pts"] for f in mine if not f["island"]])
    shape.Unfracture()
    shape.BooleanSubtract(inner)
    return shape

def differ(a, b):
    """The area, nm², in one of two fills but not in the other."""
    one = a.CloneDropTriangulation()
    one.BooleanSubtract(b)
    other = b.CloneDropTriangulation()
    other.BooleanSubtract(a)
    return one.Area() + other.Area()

# A difference this small, nm² (a 10 µm square), is rounding, not copper.
SLIVER = 1e8


def drop_slivers(merged, min_width):
    """Drops the pieces of a merged fill thinner than the zone's minimum width. KiCad's own fill
    is its area shrunk and grown again by half that width, so none of its pieces is thinner;
    where the saved fill meets the window's edge along a nearly parallel line, the merge can
    leave a strip a few micrometres wide, which DRC reports as isolated copper (rvpc-revb).
    Only a piece whose area over half its perimeter (its mean width) is under the minimum is
    tested, by shrinking it: a plane's outline is never shrunk, which costs seconds."""
    for i in reversed(range(merged.OutlineCount())):
        outline = merged.COutline(i)
        if 2 * outline.Area() >= min_width * outline.Length():
            continue
        piece = pcbnew.SHAPE_POLY_SET()
        piece.AddOutline(outline)
        piece.Deflate(min_width // 2 - 1000, pcbnew.CORNER_STRATEGY_ALLOW_ACUTE_CORNERS, 5000)
        if piece.OutlineCount() == 0:
            merged.DeletePolygon(i)
island_flags = {}
board = pcbnew.LoadBoard(sys.argv[1])
zones = [z for z in board.Zones() if z.m_Uuid.AsString() in wanted]
if change:
    # No pad's connection to a refilled zone is cut by the window's edge: the window takes in
    # those the change reaches, whole, and leaves out whole those it does not, as saved
    # (refill.ts's `FillChange` says why), never past `limit`.
    limit = rectangles(change["limit"])
    reliefs = relief_boxes(board, zones)
    windows, kept, taken = connections(change["window"], reliefs, change["reached"], limit)
    area = rectangles(grown(windows, change["fillEdge"]))
    inner = area.CloneDropTriangulation()
    inner.Deflate(change["islandEdge"], pcbnew.CORNER_STRATEGY_ALLOW_ACUTE_CORNERS, 5000)
    reach = rectangles(change["reach"])
modes = fill(board, zones)
if change:
    # An island of KiCad's fill that the window's edge cuts would leave its outer part of the
    # saved fill behind, cut off: the window takes it in whole, as far as KiCad's fill is known
    # clear of the fill area's edge (a connection it overlaps that the change does not reach
    # still keeps its saved fill).
    seen = []
    while True:
        islands = []
        for z in zones:
            shape = window_shape(windows, kept[z.m_Uuid.AsString()], taken[z.m_Uuid.AsString()])
            for layer in z.GetLayerSet().Seq():
                filled = z.GetFilledPolysList(layer)
                for i in range(filled.OutlineCount()):
                    if z.IsIsland(layer, i):
                        b = filled.COutline(i).BBox()
                        box = [b.GetLeft(), b.GetTop(), b.GetRight(), b.GetBottom()]
                        if box not in seen and crosses(box, shape) and inside(box, inner):
                            islands.append(box)
        if not islands:
            break
        seen += islands
        windows, kept, taken = connections(windows + islands, reliefs, change["reached"], inner)
if change:
    for z in zones:
        zid = z.m_Uuid.AsString()
        saved = change["fills"][zid]
        window = window_shape(windows, kept[zid], taken[zid])
        for layer in z.GetLayerSet().Seq():
            mine = [f for f in saved if f["layer"] == layer_name(layer)]
            filled = z.GetFilledPolysList(layer)
            # Unfracturing a whole plane's saved fill costs KiCad a second or more (vme-wren's have
            # 120,000 points): it is done only for an island that needs it.
            joined = []
            def joined_outside():
                if not joined:
                    joined.append(saved_joined_outside(mine))
                return joined[0]
            # KiCad's fill inside the window, its islands as the zone says.
            fresh, fresh_islands = pcbnew.SHAPE_POLY_SET(), pcbnew.SHAPE_POLY_SET()
            for i in range(filled.OutlineCount()):
                piece = filled.COutline(i)
                if z.IsIsland(layer, i):
                    if removed(piece, *modes[zid], joined_outside):
                        continue
                    fresh_islands.AddOutline(piece)
                fresh.AddOutline(piece)
            fresh.BooleanIntersection(window)
            fresh_islands.BooleanIntersection(window)
            saved_fill = outlines([f["pts"] for f in mine])
            # The merge differs from the saved fill only inside the window, and a plane's slit
            # outline cut to the window costs a fraction of a whole-plane boolean.
            saved_here = saved_fill.CloneDropTriangulation()
            saved_here.BooleanIntersection(window)
            if differ(saved_here, fresh) < SLIVER:
                # Nothing changed here (boolean operations leave slivers of rounding): the saved
                # fill keeps its points, and its bytes.
                z.SetFilledPolysList(layer, saved_fill)
                island_flags[(zid, layer)] = [f["island"] for f in mine]
                continue
            # The saved fill is cut with every point where it was saved (`unslit`): KiCad's own
            # Unfracture moves some of an older KiCad's points by nanometres all over the plane (on
            # the Sofle keyboard the GND pour came 26 nm nearer a teardrop 30 mm from the change:
            # a new clearance error).
            merged = unslit([f["pts"] for f in mine])
            merged.BooleanSubtract(window)
            merged.BooleanAdd(fresh)
            drop_slivers(merged, z.GetMinThickness())
            merged.Fracture()
            z.SetFilledPolysList(layer, merged)
            # Islands are the saved ones outside the window and KiCad's inside it.
            known = outlines([f["pts"] for f in mine if f["island"]])
            known.BooleanSubtract(window)
            known.BooleanAdd(fresh_islands)
            island_flags[(zid, layer)] = [known.Collide(merged.COutline(i).CPoint(0), 10) for i in range(merged.OutlineCount())]
out = []
for z in zones:
    layers = []
    for layer in z.GetLayerSet().Seq():
        polys = z.GetFilledPolysList(layer)
        flags = island_flags.get((z.m_Uuid.AsString(), layer))
        fills_ = []
        for i in range(polys.OutlineCount()):
            chain = polys.COutline(i)
            pts = []
            for j in range(chain.PointCount()):
                p = chain.CPoint(j)
                pts.append(p.x)
                pts.append(p.y)
            fills_.append({"island": bool(flags[i] if flags else z.IsIsland(layer, i)), "pts": pts})
        layers.append({"layer": layer_name(layer), "fills": fills_})
    out.append({"id": z.m_Uuid.AsString(), "layers": layers})
with open(sys.argv[3], "w") as result:
    # json.dumps, not json.dump: only a whole document goes through the C encoder, and a plane's
    # fill has tens of thousands of points (glasgow's: 0.17 s in Python's own encoder).
    result.write(json.dumps(out))
if len(sys.argv) > 4:
    board.Save(sys.argv[4])
