"""Refills zones of a board with KiCad's own filler (pcbnew.ZONE_FILLER).

Run by refill.ts under KiCad's Python, which bundles this file into the copperhead binary as
text:

    python3 fill.py BOARD SPEC RESULT [SAVED_COPY]

BOARD is a temp copy of the edited board; SPEC is a JSON file shaped as `FillSpec` in
refill.ts (keep the two in step); RESULT is where the fills are written, shaped as
`FilledZone[]` there, points in nanometres; with SAVED_COPY, the filled board is also saved
there, for comparisons. Results go to a file because KiCad's bindings print warnings on stdout.

With a `change` in the spec, KiCad fills the board twice inside a window around the change,
with and without its copper, and only the difference is applied to the saved fill (refill.ts's
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

def layer_name(layer):
    return pcbnew.BOARD.GetStandardLayerName(layer)

def fill(path):
    """Loads and fills a board: the zones asked for, their fills and their islands."""
    board = pcbnew.LoadBoard(path)
    zones = [z for z in board.Zones() if z.m_Uuid.AsString() in wanted]
    if change:
        # The copy carries no fills (reading a large board's fills costs KiCad a minute): other
        # zones get theirs near the change from the spec, and the zones to refill are cut to the
        # window. Fills come fractured (outlines with slits), as KiCad keeps them.
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
        # A piece the window's edge cuts off from the rest of its pour is no island: KiCad keeps
        # every piece here, and only those wholly inside the window go as the zone says.
        modes = {}
        for z in zones:
            modes[z.m_Uuid.AsString()] = (z.GetIslandRemovalMode(), z.GetMinIslandArea())
            z.SetIslandRemovalMode(pcbnew.ISLAND_REMOVAL_MODE_NEVER)
            # A hatch's grid may follow the zone's outline: a hatched zone is filled whole.
            if z.GetFillMode() != pcbnew.ZONE_FILL_MODE_HATCH_PATTERN:
                z.Outline().BooleanIntersection(window)
                z.CacheBoundingBox()
    board.BuildConnectivity()
    pcbnew.ZONE_FILLER(board).Fill(zones)
    if not change:
        return board, zones, None, None
    polys, islands = {}, {}
    for z in zones:
        for layer in z.GetLayerSet().Seq():
            key = (z.m_Uuid.AsString(), layer)
            filled = z.GetFilledPolysList(layer)
            polys[key], islands[key] = pcbnew.SHAPE_POLY_SET(), pcbnew.SHAPE_POLY_SET()
            for i in range(filled.OutlineCount()):
                piece = filled.COutline(i)
                if z.IsIsland(layer, i):
                    if removed(piece, *modes[key[0]]):
                        continue
                    islands[key].AddOutline(piece)
                polys[key].AddOutline(piece)
    return board, zones, polys, islands

def removed(piece, mode, min_area):
    """Whether KiCad would remove this island: it lies inside the window, clear of its edge."""
    box = piece.BBox()
    x1, y1, x2, y2 = change["inner"]
    inside = box.GetX() > x1 and box.GetY() > y1 and box.GetRight() < x2 and box.GetBottom() < y2
    return inside and (mode == pcbnew.ISLAND_REMOVAL_MODE_ALWAYS or (mode == pcbnew.ISLAND_REMOVAL_MODE_AREA and piece.Area() < min_area))

# A difference this small, nm² (a 10 µm square), is rounding, not copper.
SLIVER = 1e8
island_flags = {}
if change:
    window = rectangles([change["window"]])
    reach = rectangles([change["reach"]])
    # The same board without this change's copper, filled by the same KiCad: what the fill
    # would be today anyway. Only the difference the change makes is applied to the saved fill.
    _, _, unchanged, unchanged_islands = fill(change["base"])
board, zones, after, after_islands = fill(sys.argv[1])
if change:
    near = rectangles(change["near"])
    for z in zones:
        saved = change["fills"][z.m_Uuid.AsString()]
        for layer in z.GetLayerSet().Seq():
            key = (z.m_Uuid.AsString(), layer)
            mine = [f for f in saved if f["layer"] == layer_name(layer)]
            gained = after[key].CloneDropTriangulation()
            gained.BooleanSubtract(unchanged[key])
            lost = unchanged[key].CloneDropTriangulation()
            lost.BooleanSubtract(after[key])
            # Boolean operations on a whole plane's slit outline cost KiCad seconds each;
            # without the slits they take a fraction of one.
            saved_fill = outlines([f["pts"] for f in mine])
            merged = saved_fill.CloneDropTriangulation()
            merged.Unfracture()
            # Around the new copper the fill is KiCad's new one alone: no copper of the saved
            # fill is left inside the new items' clearance.
            stale = near.CloneDropTriangulation()
            stale.BooleanSubtract(after[key])
            new_copper = gained.CloneDropTriangulation()
            new_copper.BooleanSubtract(merged)
            cut = lost.CloneDropTriangulation()
            cut.BooleanAdd(stale)
            cut.BooleanIntersection(merged)
            if new_copper.Area() < SLIVER and cut.Area() < SLIVER:
                # Nothing to change here (boolean operations leave slivers of rounding): the
                # saved fill keeps its points, and its bytes.
                z.SetFilledPolysList(layer, saved_fill)
                island_flags[key] = [f["island"] for f in mine]
                continue
            merged.BooleanAdd(gained)
            merged.BooleanSubtract(lost)
            merged.BooleanSubtract(stale)
            merged.Fracture()
            z.SetFilledPolysList(layer, merged)
            # Islands are the saved ones and those the change made (the window's edge cuts off
            # the same pieces with and without the change).
            known = outlines([f["pts"] for f in mine if f["island"]])
            made = after_islands[key].CloneDropTriangulation()
            made.BooleanSubtract(unchanged_islands[key])
            known.BooleanAdd(made)
            island_flags[key] = [known.Collide(merged.COutline(i).CPoint(0), 10) for i in range(merged.OutlineCount())]
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
    json.dump(out, result)
if len(sys.argv) > 4:
    board.Save(sys.argv[4])
