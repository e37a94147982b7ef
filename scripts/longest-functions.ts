/**
 * Lists the longest functions under a folder (default `src/`), longest first: how many lines
 * each spans from its signature to its closing brace, nested functions counted on their own
 * as well as inside their parent. A review aid for keeping functions short.
 *
 *   bun scripts/longest-functions.ts [DIR] [--most N]
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const args = process.argv.slice(2);
const mostAt = args.indexOf("--most");
const most = mostAt >= 0 ? Number(args[mostAt + 1]) : 15;
const dir = args.find((a, i) => !a.startsWith("--") && (mostAt < 0 || i !== mostAt + 1)) ?? "src";

function files(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

interface Span {
  where: string;
  name: string;
  lines: number;
}

function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return "(anonymous)";
}

const spans: Span[] = [];
for (const file of files(dir)) {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      spans.push({ where: `${relative(".", file)}:${start + 1}`, name: nameOf(node), lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
spans.sort((a, b) => b.lines - a.lines || a.where.localeCompare(b.where));
for (const s of spans.slice(0, most)) console.log(`${String(s.lines).padStart(5)}  ${s.name}  ${s.where}`);
