/**
 * The printer: bytes of the file for everything no edit touched, UTF-8 for what edits wrote.
 * Untouched stretches of a parsed file come out as ranges of its bytes, and neighbouring
 * ranges merge, so printing an unedited document is one copy and an edited one copies the
 * untouched rest in a few large pieces.
 */
import { decodeLossless, encodeLossless } from "./bytes.ts";
import { ParsedAtom, ParsedDocument, ParsedList, type Sink } from "./compact.ts";
import type { SDocument, SList, SNode } from "./tree.ts";

/**
 * Prints a document or node as a lossless string (bytes that are not UTF-8 stay escaped, see
 * `bytes.ts`): for comparing, diffing and showing. Write files with `printSexprBytes`.
 */
export function printSexpr(node: SDocument | SNode): string {
  return decodeLossless(printSexprBytes(node));
}

/** Prints a document or node as the exact bytes of the file. */
export function printSexprBytes(node: SDocument | SNode): Uint8Array {
  const sink = new ByteSink();
  if (node.type === "document") {
    printNode(sink, node.root, true);
    if (node instanceof ParsedDocument) node.printTrailing(sink);
    else sink.text(node.trailing);
  } else printNode(sink, node, true);
  return sink.finish();
}

/** Prints a node without the whitespace before it, as a lossless string. */
export function printBare(node: SNode): string {
  const sink = new ByteSink();
  printNode(sink, node, false);
  return decodeLossless(sink.finish());
}

function printNode(sink: Sink, node: SNode, withPre: boolean): void {
  if (node.type === "atom") {
    printAtom(sink, node, withPre);
    return;
  }
  // Each frame is a list and the index of the next child to print.
  const lists: SList[] = [];
  const next: number[] = [];
  if (openList(sink, node, withPre)) {
    lists.push(node);
    next.push(0);
  }
  while (lists.length > 0) {
    const depth = lists.length - 1;
    const list = lists[depth]!;
    const index = next[depth]!;
    if (index >= list.items.length) {
      if (list instanceof ParsedList) list.printClose(sink);
      else {
        sink.text(list.post);
        sink.text(")");
      }
      lists.pop();
      next.pop();
      continue;
    }
    next[depth] = index + 1;
    const child = list.items[index]!;
    if (child.type === "atom") printAtom(sink, child, true);
    else if (openList(sink, child, true)) {
      lists.push(child);
      next.push(0);
    }
  }
}

/** Prints up to the list's items; false when the list printed whole. */
function openList(sink: Sink, list: SList, withPre: boolean): boolean {
  if (list instanceof ParsedList) return list.printOpen(sink, withPre);
  if (withPre) sink.text(list.pre);
  if (!list.implicit) sink.text("(");
  return true;
}

function printAtom(sink: Sink, atom: SNode & { type: "atom" }, withPre: boolean): void {
  if (atom instanceof ParsedAtom) atom.print(sink, withPre);
  else {
    if (withPre) sink.text(atom.pre);
    sink.text(atom.raw);
  }
}

/** Collects output, merging ranges that continue one another. */
class ByteSink implements Sink {
  #out = new Uint8Array(0);
  #length = 0;
  #bytes: Buffer | undefined;
  #from = 0;
  #to = 0;

  range(bytes: Buffer, from: number, to: number): void {
    if (from === to) return;
    if (bytes === this.#bytes && from === this.#to) {
      this.#to = to;
      return;
    }
    this.#flush();
    this.#bytes = bytes;
    this.#from = from;
    this.#to = to;
  }

  text(text: string): void {
    if (text.length === 0) return;
    this.#flush();
    let ascii = true;
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (!ascii) {
      this.#append(encodeLossless(text));
      return;
    }
    this.#reserve(text.length);
    const out = this.#out;
    let at = this.#length;
    for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
    this.#length = at;
  }

  finish(): Uint8Array {
    // Nothing edited: one range of the file, copied once.
    if (this.#length === 0 && this.#bytes) return Uint8Array.prototype.slice.call(this.#bytes, this.#from, this.#to);
    this.#flush();
    return this.#out.subarray(0, this.#length);
  }

  #flush(): void {
    const bytes = this.#bytes;
    if (!bytes) return;
    this.#bytes = undefined;
    const from = this.#from;
    const to = this.#to;
    this.#reserve(to - from);
    if (to - from < 32) {
      const out = this.#out;
      let at = this.#length;
      for (let i = from; i < to; i++) out[at++] = bytes[i]!;
      this.#length = at;
    } else {
      this.#out.set(bytes.subarray(from, to), this.#length);
      this.#length += to - from;
    }
  }

  #append(chunk: Uint8Array): void {
    this.#reserve(chunk.length);
    this.#out.set(chunk, this.#length);
    this.#length += chunk.length;
  }

  #reserve(extra: number): void {
    const needed = this.#length + extra;
    if (needed <= this.#out.length) return;
    const larger = new Uint8Array(Math.max(needed, this.#out.length * 2, 4096));
    larger.set(this.#out.subarray(0, this.#length));
    this.#out = larger;
  }
}
