import { describe, expect, test } from "bun:test";
import { onSegment, placePoint, SegmentIndex, toIU } from "../../src/kicad/schematic/geometry.ts";

describe("placing library pins", () => {
  // A pin tip one unit right of and two units above the symbol origin (library Y points up).
  const tip = { x: 1, y: 2 };
  const at = { x: 100, y: 100 };
  const cases: [number, "x" | "y" | undefined, { x: number; y: number }][] = [
    [0, undefined, { x: 101, y: 98 }],
    [90, undefined, { x: 98, y: 99 }],
    [180, undefined, { x: 99, y: 102 }],
    [270, undefined, { x: 102, y: 101 }],
    [0, "x", { x: 101, y: 102 }],
    [0, "y", { x: 99, y: 98 }],
    // The mirror applies after the rotation.
    [90, "x", { x: 98, y: 101 }],
    [90, "y", { x: 102, y: 99 }],
    [270, "y", { x: 98, y: 101 }],
  ];
  for (const [rotation, mirror, expected] of cases) {
    test(`rotation ${rotation}${mirror ? `, mirror ${mirror}` : ""}`, () => {
      expect(placePoint(tip, { at, rotation, mirror })).toEqual(expected);
    });
  }
});

describe("segments", () => {
  test("millimetres round to KiCad's 100 nm units", () => {
    expect(toIU(0.1 + 0.2)).toBe(3000);
    expect(toIU(-1.27)).toBe(-12700);
  });

  test("onSegment includes the ends and allows 1 IU", () => {
    const a = { x: 0, y: 0 };
    const b = { x: 100, y: 0 };
    expect(onSegment({ x: 0, y: 0 }, a, b)).toBe(true);
    expect(onSegment({ x: 50, y: 1 }, a, b)).toBe(true);
    expect(onSegment({ x: 50, y: 2 }, a, b)).toBe(false);
    expect(onSegment({ x: 102, y: 0 }, a, b)).toBe(false);
  });
});

describe("segment index", () => {
  test("finds every segment through a point, in the order they were given, and only near ones", () => {
    const mm = (v: number) => toIU(v);
    const segments = [
      { a: { x: mm(0), y: mm(10) }, b: { x: mm(300), y: mm(10) } }, // a long bus across many cells
      { a: { x: mm(100), y: mm(0) }, b: { x: mm(100), y: mm(50) } },
      { a: { x: mm(200), y: mm(200) }, b: { x: mm(210), y: mm(200) } },
      { a: { x: mm(-50), y: mm(-50) }, b: { x: mm(150), y: mm(150) } }, // diagonal
    ];
    const index = new SegmentIndex(segments);
    const through = (p: { x: number; y: number }) =>
      index.near(p).filter((n) => onSegment(p, segments[n]!.a, segments[n]!.b));
    expect(through({ x: mm(100), y: mm(10) })).toEqual([0, 1]);
    expect(through({ x: mm(299.99), y: mm(10) })).toEqual([0]);
    expect(through({ x: mm(205), y: mm(200) })).toEqual([2]);
    expect(through({ x: mm(-50), y: mm(-50) })).toEqual([3]);
    expect(through({ x: mm(100), y: mm(100) })).toEqual([3]);
    expect(index.near({ x: mm(1000), y: mm(1000) })).toEqual([]);
  });
});
