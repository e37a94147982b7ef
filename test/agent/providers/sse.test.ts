import { describe, expect, test } from "bun:test";
import { SseParser } from "../../../src/agent/providers/sse.ts";

describe("SseParser", () => {
  test("events split anywhere, with LF, CRLF and CR line ends, comments and multi-line data", () => {
    const stream =
      ': keep-alive\r\nevent: ping\r\ndata: {"type":"ping"}\r\n\r\ndata: line one\rdata:line two\r\rdata: [DONE]\n\n';
    // Every split point, including between a CR and its LF.
    for (let cut = 0; cut <= stream.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(stream.slice(0, cut)), ...parser.push(stream.slice(cut))];
      expect(events).toEqual([
        { event: "ping", data: '{"type":"ping"}' },
        { event: "message", data: "line one\nline two" },
        { event: "message", data: "[DONE]" },
      ]);
    }
  });

  test("an event without data is dropped, and an unfinished one is not dispatched", () => {
    const parser = new SseParser();
    expect(parser.push("event: empty\n\ndata: half")).toEqual([]);
  });

  test("a long stream of short lines parses in linear time", () => {
    const parser = new SseParser();
    const events = parser.push("data: x\n\n".repeat(200_000));
    expect(events).toHaveLength(200_000);
  });
});
