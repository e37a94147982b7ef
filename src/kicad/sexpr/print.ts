/** The printer: unchanged input prints byte-identically. */
import { encodeLossless } from "./bytes.ts";
import type { SDocument, SList, SNode } from "./tree.ts";

/**
 * Prints a document or node as a lossless string (bytes that are not UTF-8 stay escaped, see
 * `bytes.ts`): for comparing, diffing and showing. Write files with `printSexprBytes`.
 */
export function printSexpr(node: SDocument | SNode): string {
  if (node.type === "document") return printNode(node.root) + node.trailing;
  return printNode(node);
}

/** Prints a document or node as the exact bytes of the file. */
export function printSexprBytes(node: SDocument | SNode): Uint8Array {
  return encodeLossless(printSexpr(node));
}

/** Prints a node without the whitespace before it. */
export function printBare(node: SNode): string {
  return node.type === "atom" ? node.raw : printNode(node, false);
}

function printNode(node: SNode, withPre = true): string {
  if (node.type === "atom") return withPre ? node.pre + node.raw : node.raw;
  let out = "";
  // Each frame is a list and the index of the next child to print.
  const lists: SList[] = [node];
  const next: number[] = [0];
  out += (withPre ? node.pre : "") + (node.implicit ? "" : "(");
  while (lists.length > 0) {
    const depth = lists.length - 1;
    const list = lists[depth]!;
    const index = next[depth]!;
    if (index >= list.items.length) {
      out += list.post + ")";
      lists.pop();
      next.pop();
      continue;
    }
    next[depth] = index + 1;
    const child = list.items[index]!;
    if (child.type === "atom") {
      out += child.pre + child.raw;
    } else {
      out += child.implicit ? child.pre : child.pre + "(";
      lists.push(child);
      next.push(0);
    }
  }
  return out;
}
