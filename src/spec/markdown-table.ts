/**
 * Markdown table rows as the generated docs (BOM.md, PINOUT.md) write and read them: one line
 * per row, `|` inside a cell escaped, line breaks flattened.
 */

/** `| a | b \| c |` from cells. */
export function tableRow(cells: readonly string[]): string {
  return `| ${cells.map(escapeCell).join(" | ")} |`;
}

/** The `| --- | --- |` line under a header of `columns` cells. */
export function tableRule(columns: number): string {
  return tableRow(Array.from({ length: columns }, () => "---"));
}

/** Whether a split row is a header rule (`---`, `:--`, `:-:`). */
export function isRuleRow(cells: readonly string[]): boolean {
  return cells.length > 0 && cells.every((c) => /^:?-+:?$/.test(c));
}

function escapeCell(cell: string): string {
  return cell.replace(/\r?\n/g, " ").replace(/\|/g, "\\|");
}

/** Splits `| a | b \| c |` into trimmed, unescaped cells. */
export function splitTableRow(text: string): string[] {
  const cells: string[] = [];
  let cell = "";
  for (let i = text.startsWith("|") ? 1 : 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "\\" && text[i + 1] === "|") {
      cell += "|";
      i++;
    } else if (ch === "|") {
      cells.push(cell.trim());
      cell = "";
    } else cell += ch;
  }
  if (cell.trim() !== "") cells.push(cell.trim());
  return cells;
}
