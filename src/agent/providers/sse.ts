/**
 * A server-sent events parser (the WHATWG HTML "event stream" format), fed text as it arrives.
 *
 * Lines end in LF, CRLF or CR; `event:` names the event, `data:` lines are joined with LF, a
 * line starting with `:` is a comment (keep-alive), and a blank line dispatches the event. A
 * dispatch with no data is dropped, as the format says. Only what the providers read is kept:
 * `id:` and `retry:` are ignored.
 */

export interface SseEvent {
  /** The `event:` field, or `message` when there was none. */
  event: string;
  data: string;
}

export class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];
  /** A CR ended the last chunk: an LF starting the next one belongs to it. */
  private pendingCr = false;

  /** Parses `text` (the next piece of the stream) and returns the events it completed. */
  push(text: string): SseEvent[] {
    if (this.pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    // Each terminator is searched for once per occurrence, so a long buffer costs linear time.
    let lf = this.buffer.indexOf("\n");
    let cr = this.buffer.indexOf("\r");
    for (;;) {
      if (lf >= 0 && lf < start) lf = this.buffer.indexOf("\n", start);
      if (cr >= 0 && cr < start) cr = this.buffer.indexOf("\r", start);
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end < 0) break;
      const line = this.buffer.slice(start, end);
      if (end === cr && lf === end + 1) start = end + 2;
      else {
        start = end + 1;
        if (end === cr && start === this.buffer.length) this.pendingCr = true;
      }
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  private line(line: string): SseEvent | undefined {
    if (line === "") {
      const event = this.data.length > 0 ? { event: this.event || "message", data: this.data.join("\n") } : undefined;
      this.event = "";
      this.data = [];
      return event;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    return undefined;
  }
}
