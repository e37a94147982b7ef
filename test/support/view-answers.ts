/** Reading what the `view` tool answers in a test: its legend and its decoded PNG. */
import { expect } from "bun:test";
import { WithImages } from "../../src/agent/tools/tool.ts";
import { pngInfo } from "./png.ts";

/** A view answer's legend and its one PNG, decoded. */
export function image(answer: unknown) {
  expect(answer).toBeInstanceOf(WithImages);
  const { result, images } = answer as WithImages;
  expect(images).toHaveLength(1);
  expect(images[0]!.mediaType).toBe("image/png");
  return { legend: result as Record<string, unknown>, png: pngInfo(Buffer.from(images[0]!.data, "base64")) };
}
