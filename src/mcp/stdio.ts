/**
 * The stdio transport of `copperhead mcp`: newline-delimited JSON-RPC on stdin and stdout, in
 * place of the SDK's, so that every request gets an answer.
 *
 * The SDK's transport drops a line that is not a valid JSON-RPC message (a `progressToken`
 * that is an object, a boolean, `null` or a fraction; `_meta` that is a string) without a word,
 * and leaves a request whose params do not fit the method's schema (`arguments` as a string, a
 * numeric tool `name`, a numeric `cursor`) to fail inside the SDK as `-32603` with zod's issue
 * dump. Here each line is checked first, and
 * - a line that is not JSON gets `-32700` (id null);
 * - a request with an id whose params do not fit gets `-32602`, naming each bad field in a
 *   sentence; one that is not a request at all gets `-32600`;
 * - anything nested deeper than any request needs (`MAX_NESTING`) is refused the same way,
 *   before a recursive walk can overflow the stack;
 * - what cannot be answered (no usable id: a malformed notification) is reported to
 *   `onerror`, as the SDK would.
 * Everything that passes goes to the SDK unchanged.
 */
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  JSONRPCMessageSchema,
  JSONRPCRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { exceedsNesting, MAX_NESTING } from "../util/nesting.ts";

/** The requests the server handles, each with the params schema the SDK will hold it to. */
const REQUEST_SCHEMAS: Record<
  string,
  { safeParse(value: unknown): { success: boolean; error?: { issues: Issue[] } } }
> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
};

interface Issue {
  path: PropertyKey[];
  message: string;
}

/** A request id JSON-RPC allows: a string or an integer. */
type RequestId = string | number;

/** One message line at most this long (the SDK's own buffer limit). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

export class CheckedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private buffer = "";
  private started = false;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly stdin: NodeJS.ReadableStream = process.stdin,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
  ) {}

  private readonly ondata = (chunk: Buffer | string): void => {
    this.buffer += typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl).replace(/\r$/, "");
      this.buffer = this.buffer.slice(nl + 1);
      this.receive(line);
    }
    if (this.buffer.length > MAX_LINE_BYTES) {
      this.buffer = "";
      this.reply(null, ErrorCode.InvalidRequest, `Invalid Request: a message longer than ${MAX_LINE_BYTES} bytes`);
    }
  };

  private readonly onstreamerror = (error: Error): void => this.onerror?.(error);

  async start(): Promise<void> {
    if (this.started) throw new Error("the stdio transport is started already");
    this.started = true;
    this.stdin.on("data", this.ondata);
    this.stdin.on("error", this.onstreamerror);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.ondata);
    this.stdin.off("error", this.onstreamerror);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.buffer = "";
    this.onclose?.();
  }

  private receive(line: string): void {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.reply(null, ErrorCode.ParseError, "Parse error: the line is not JSON");
      return;
    }
    if (Array.isArray(value)) {
      this.reply(
        null,
        ErrorCode.InvalidRequest,
        "Invalid Request: batches are not part of MCP; send one request per line",
      );
      return;
    }
    const request = asRequest(value);
    if (exceedsNesting(value)) {
      this.refuse(request, ErrorCode.InvalidParams, `Invalid params: nested more than ${MAX_NESTING} levels deep`);
      return;
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    const isRequest = request?.hasId === true && request.method !== undefined;
    // A request is held to the request shape, then to its method's schema, each of which names
    // the bad field; the union of every message shape would only say that nothing matched.
    const generic = isRequest ? JSONRPCRequestSchema.safeParse(value) : undefined;
    const specific = REQUEST_SCHEMAS[request?.method ?? ""];
    const fit = generic && !generic.success ? generic : generic && specific ? specific.safeParse(value) : undefined;
    if (message.success && (fit === undefined || fit.success)) {
      this.onmessage?.(message.data);
      return;
    }
    const issues =
      (fit?.error?.issues as Issue[] | undefined) ?? (message.success ? [] : (message.error.issues as Issue[]));
    if (request?.method !== undefined && request.hasParams)
      this.refuse(request, ErrorCode.InvalidParams, `Invalid params: ${describeIssues(issues)}`);
    else this.refuse(request, ErrorCode.InvalidRequest, `Invalid Request: ${describeIssues(issues)}`);
  }

  /** Answers a request that cannot be served; a message with no usable id goes to onerror. */
  private refuse(request: ReturnType<typeof asRequest>, code: number, message: string): void {
    if (request?.id !== undefined) this.reply(request.id, code, message);
    else if (request?.hasId) this.reply(null, code, message);
    else this.onerror?.(new Error(`Ignored a malformed message that cannot be answered: ${message}`));
  }

  private reply(id: RequestId | null, code: number, message: string): void {
    // An error response with a null id is what JSON-RPC prescribes when the id is unknown.
    void this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage).catch(
      (err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(String(err))),
    );
  }
}

/** What of a parsed line looks like a request: its id (when usable), method, and whether it has params. */
function asRequest(
  value: unknown,
): { id?: RequestId; hasId: boolean; method?: string; hasParams: boolean } | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const id = record.id;
  const usable = typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));
  return {
    ...(usable ? { id: id as RequestId } : {}),
    hasId: "id" in record,
    ...(typeof record.method === "string" ? { method: record.method } : {}),
    hasParams: "params" in record,
  };
}

/** zod issues as one sentence: each field by its path under params, with what was wrong. */
function describeIssues(issues: Issue[]): string {
  if (issues.length === 0) return "not a JSON-RPC 2.0 request";
  const parts = issues.map((issue) => {
    const path = issue.path.map(String);
    const field = (path[0] === "params" ? path.slice(1) : path).join(".");
    if (field.endsWith("progressToken") || field === "id") return `${field} must be a string or an integer`;
    // zod's wording, in JSON's terms: "Invalid input: expected record, received string".
    const what = issue.message.replace(/^Invalid input: /, "").replace(/\bexpected record\b/, "expected an object");
    return field ? `${field}: ${what}` : what;
  });
  return [...new Set(parts)].join("; ");
}
