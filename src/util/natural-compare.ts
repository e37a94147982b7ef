/**
 * Natural string order, in which R2 comes before R10: the order KiCad lists references, pins
 * and nets in, and so the order of every sorted list copperhead shows or writes.
 */

/** KiCad's StrNumCmp (case-sensitive, as the netlist exporter calls it): digit runs compare by value. */
export function naturalCompare(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (isDigit(a[i]!) && isDigit(b[j]!)) {
      let ei = i;
      while (ei < a.length && isDigit(a[ei]!)) ei++;
      let ej = j;
      while (ej < b.length && isDigit(b[ej]!)) ej++;
      const na = Number(a.slice(i, ei));
      const nb = Number(b.slice(j, ej));
      if (na !== nb) return na < nb ? -1 : 1;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] !== b[j]) return a[i]! < b[j]! ? -1 : 1;
    i++;
    j++;
  }
  if (i < a.length) return 1;
  if (j < b.length) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}
