/**
 * The streamed wire formats of the model APIs, for loopback servers: an answer written the
 * simple, non-streamed way is turned into the server-sent events the real API sends for it
 * (Anthropic's "Streaming Messages" events; OpenAI's `chat.completion.chunk`s with the usage
 * chunk and `[DONE]`), text and tool arguments cut into pieces the way a model streams them.
 */

/** One server-sent event; `data` is JSON-encoded unless it is a string. */
export interface SseFrame {
  event?: string;
  data: unknown;
}

export function encodeFrame(frame: SseFrame): string {
  const data = typeof frame.data === "string" ? frame.data : JSON.stringify(frame.data);
  return `${frame.event ? `event: ${frame.event}\n` : ""}data: ${data}\n\n`;
}

export interface StreamPacing {
  /** Wait before each frame (the first included). */
  intervalMs?: number;
  /** Spread the frames evenly over this long instead: the answer ends after `totalMs`. */
  totalMs?: number;
  /** Send this many frames, then nothing more: the stream stays open and silent. */
  stallAfter?: number;
  /**
   * With `stallAfter`: instead of silence, an SSE comment (a keep-alive) this often, forever.
   * The stream is never idle and never ends.
   */
  keepAliveMs?: number;
}

/** A `text/event-stream` response sending `frames`, paced as asked. */
export function sseResponse(frames: SseFrame[], pacing: StreamPacing = {}): Response {
  const encoder = new TextEncoder();
  const interval = pacing.totalMs !== undefined ? pacing.totalMs / frames.length : pacing.intervalMs;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const [i, frame] of frames.entries()) {
        if (pacing.stallAfter !== undefined && i >= pacing.stallAfter) {
          if (pacing.keepAliveMs)
            keepAlive = setInterval(() => controller.enqueue(encoder.encode(": keep-alive\n\n")), pacing.keepAliveMs);
          return;
        }
        if (interval) await Bun.sleep(interval);
        controller.enqueue(encoder.encode(encodeFrame(frame)));
      }
      controller.close();
    },
    cancel: () => clearInterval(keepAlive),
  });
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

/**
 * Cuts `text` into pieces of about 8 characters (a model streams a few at a time), or into 64
 * pieces when that is more, so a huge test input stays a modest stream.
 */
export function pieces(text: string): string[] {
  const size = Math.max(8, Math.ceil(text.length / 64));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [""];
}

type Block = Record<string, unknown> & { type: string };

/** A Messages API answer (`content`, `stop_reason`, `usage`) as the events that stream it. */
export function anthropicFrames(message: {
  content: Block[];
  stop_reason: string;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
  };
}): SseFrame[] {
  // The input counts, the cache's included, come in message_start; output_tokens grows to message_delta's.
  const { output_tokens, ...input } = message.usage;
  const frames: SseFrame[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_loopback",
          type: "message",
          role: "assistant",
          model: "loopback",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...input, output_tokens: 1 },
        },
      },
    },
    { event: "ping", data: { type: "ping" } },
  ];
  for (const [index, block] of message.content.entries()) {
    const { start, deltas } = blockEvents(block);
    frames.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: start } });
    for (const delta of deltas)
      frames.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta } });
    frames.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  }
  frames.push(
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: message.stop_reason, stop_sequence: null },
        usage: { output_tokens },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  return frames;
}

function blockEvents(block: Block): { start: Block; deltas: Array<Record<string, unknown>> } {
  switch (block.type) {
    case "text":
      return {
        start: { type: "text", text: "" },
        deltas: pieces(String(block.text)).map((text) => ({ type: "text_delta", text })),
      };
    case "tool_use": {
      const json = JSON.stringify(block.input ?? {});
      return {
        start: { type: "tool_use", id: block.id, name: block.name, input: {} },
        deltas: pieces(json).map((partial_json) => ({ type: "input_json_delta", partial_json })),
      };
    }
    case "thinking":
      return {
        start: { type: "thinking", thinking: "" },
        deltas: [
          ...pieces(String(block.thinking)).map((thinking) => ({ type: "thinking_delta", thinking })),
          { type: "signature_delta", signature: block.signature },
        ],
      };
    default:
      // redacted_thinking and the like arrive whole in their start event.
      return { start: block, deltas: [] };
  }
}

/** A Chat Completions answer (`choices[0].message`, `finish_reason`, `usage`) as the chunks that stream it. */
export function chatCompletionFrames(answer: {
  message: {
    content?: string | null;
    refusal?: string | null;
    tool_calls?: Array<{ id?: string; function: { name: string; arguments?: unknown } }>;
  };
  finish_reason: string;
  usage?: unknown;
}): SseFrame[] {
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
    data: {
      id: "chatcmpl-loopback",
      object: "chat.completion.chunk",
      created: 0,
      model: "loopback",
      choices: [{ index: 0, delta, finish_reason }],
    },
  });
  const frames: SseFrame[] = [chunk({ role: "assistant", content: "" })];
  if (answer.message.content) for (const content of pieces(answer.message.content)) frames.push(chunk({ content }));
  if (answer.message.refusal) frames.push(chunk({ refusal: answer.message.refusal }));
  for (const [index, call] of (answer.message.tool_calls ?? []).entries()) {
    const args = call.function.arguments;
    const head = {
      index,
      ...(call.id ? { id: call.id } : {}),
      type: "function",
      function: { name: call.function.name, arguments: typeof args === "string" ? "" : args },
    };
    frames.push(chunk({ tool_calls: [head] }));
    if (typeof args === "string")
      for (const piece of pieces(args)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  frames.push(chunk({}, answer.finish_reason));
  if (answer.usage)
    frames.push({
      data: {
        id: "chatcmpl-loopback",
        object: "chat.completion.chunk",
        created: 0,
        model: "loopback",
        choices: [],
        usage: answer.usage,
      },
    });
  frames.push({ data: "[DONE]" });
  return frames;
}

/**
 * A Responses API answer (its `output` items and `usage`) as the events that stream it over
 * HTTP: `response.created`, each item `added` and `done` (a message's text also as
 * `output_text.delta` pieces, a function call's arguments as `function_call_arguments.delta`
 * pieces), then `response.completed` with the usage. Each event names its type in `type` too.
 */
export function responsesFrames(
  id: string,
  output: Block[],
  usage: { input_tokens: number; output_tokens: number },
): SseFrame[] {
  const frame = (type: string, data: Record<string, unknown>): SseFrame => ({ event: type, data: { type, ...data } });
  const frames: SseFrame[] = [frame("response.created", { response: { id, status: "in_progress", output: [] } })];
  for (const [output_index, item] of output.entries()) {
    const item_id = String(item.id);
    if (item.type === "message") {
      frames.push(frame("response.output_item.added", { output_index, item: { ...item, content: [] } }));
      const text = String((item.content as Array<{ text: string }>)[0]?.text ?? "");
      for (const delta of pieces(text))
        frames.push(frame("response.output_text.delta", { item_id, output_index, content_index: 0, delta }));
    } else if (item.type === "function_call") {
      frames.push(frame("response.output_item.added", { output_index, item: { ...item, arguments: "" } }));
      for (const delta of pieces(String(item.arguments)))
        frames.push(frame("response.function_call_arguments.delta", { item_id, output_index, delta }));
    } else frames.push(frame("response.output_item.added", { output_index, item }));
    frames.push(frame("response.output_item.done", { output_index, item }));
  }
  const completedUsage = {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
  frames.push(frame("response.completed", { response: { id, status: "completed", output, usage: completedUsage } }));
  return frames;
}
