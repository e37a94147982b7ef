/**
 * Uuids for the items copperhead puts into design files. They are derived from a seed rather
 * than drawn at random, so the same edit of the same files writes the same bytes: KiCad saves a
 * sheet's items in uuid order, and its ERC and DRC pick which item of a pair to report by them,
 * so random uuids made one run of a session report differently from the next.
 */
import { createHash } from "node:crypto";

/** Uuids in the v4 shape KiCad writes, the n-th one from sha256 of `seed#n`. */
export function uuidSource(seed: string): () => string {
  let n = 0;
  return () => {
    const hex = createHash("sha256").update(`${seed}#${n++}`).digest("hex");
    const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  };
}

/** The hex sha256 of `bytes`, as a seed that changes whenever a file does. */
export function contentSeed(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}
