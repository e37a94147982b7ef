import { describe, expect, test } from "bun:test";
import {
  BRIDGE_SOCKET_ENV,
  BRIDGE_TOKEN_ENV,
  lineReader,
  MAX_REQUEST_BYTES,
  openToolBridge,
  type ToolBridge,
} from "../../../src/agent/providers/agent-cli/bridge.ts";

describe("the bridge socket's line reader", () => {
  test("a character cut between two chunks arrives whole", () => {
    const lines: string[] = [];
    const read = lineReader((line) => void lines.push(line));
    const bytes = new TextEncoder().encode('{"v":"Ω10 µF ✓"}\n{"w":1}\n');
    // Cut inside "Ω" (two bytes) and inside "✓" (three bytes).
    const cuts = [6, 16, bytes.length];
    let from = 0;
    for (const cut of cuts) {
      read(bytes.subarray(from, cut));
      from = cut;
    }
    expect(lines).toEqual(['{"v":"Ω10 µF ✓"}', '{"w":1}']);
  });

  test("after a handler hangs up, nothing more is read", () => {
    const lines: string[] = [];
    const read = lineReader((line) => {
      lines.push(line);
      return false;
    });
    read(new TextEncoder().encode("first\nsecond\n"));
    read(new TextEncoder().encode("third\n"));
    expect(lines).toEqual(["first"]);
  });

  test("over a real socket, a call whose bytes are split mid-character reaches the run intact", async () => {
    const bridge = openToolBridge();
    try {
      const received = new Promise<unknown>((resolve) =>
        bridge.onCall((call) => {
          resolve(call.arguments);
          call.reply({ content: "ok", isError: false });
        }),
      );
      const socket = await Bun.connect({ unix: bridge.env[BRIDGE_SOCKET_ENV]!, socket: { data: () => {} } });
      const line = JSON.stringify({
        token: bridge.env[BRIDGE_TOKEN_ENV],
        id: 1,
        method: "call",
        name: "set_value",
        arguments: { value: "4µ7 Ω" },
      });
      const bytes = new TextEncoder().encode(`${line}\n`);
      const cut = bytes.indexOf(0xc2) + 1; // inside "µ"
      socket.write(bytes.subarray(0, cut));
      socket.flush();
      await Bun.sleep(50);
      socket.write(bytes.subarray(cut));
      expect(await received).toEqual({ value: "4µ7 Ω" });
      socket.end();
    } finally {
      bridge.close();
    }
  });

  test("a line past its cap, or one that breaks the prefix, hangs up at that byte, in any chunking", () => {
    for (const chunkSize of [1, 3, 1000]) {
      const lines: string[] = [];
      let hungUp = 0;
      const read = lineReader((line) => void lines.push(line), {
        maxLineBytes: 8,
        prefix: "ok:",
        hangUp: () => hungUp++,
      });
      const bytes = new TextEncoder().encode("ok:1\nok:12345\nok:123456\nok:2\n");
      for (let at = 0; at < bytes.length; at += chunkSize) read(bytes.subarray(at, at + chunkSize));
      expect({ chunkSize, lines, hungUp }).toEqual({ chunkSize, lines: ["ok:1", "ok:12345"], hungUp: 1 });

      const wrong: string[] = [];
      const readWrong = lineReader((line) => void wrong.push(line), { prefix: "ok:", hangUp: () => hungUp++ });
      readWrong(new TextEncoder().encode("ok:1\nno"));
      expect(wrong).toEqual(["ok:1"]);
      expect(hungUp).toBe(2);
    }
  });
});

/**
 * Connects to the bridge and writes `first`, then bytes without a newline, until the run
 * hangs up or `limit` bytes were taken; says how many the socket took.
 */
async function flood(bridge: ToolBridge, first: string, limit: number): Promise<{ sent: number; hungUp: boolean }> {
  const chunk = Buffer.alloc(64 * 1024, "a");
  let sent = 0;
  let hungUp = false;
  const { promise, resolve } = Promise.withResolvers<void>();
  const pump = (socket: { write(data: Uint8Array): number }) => {
    while (!hungUp && sent < limit) {
      const taken = socket.write(chunk);
      if (taken <= 0) return; // the kernel's buffer is full: wait for drain
      sent += taken;
    }
    resolve();
  };
  const end = () => {
    hungUp = true;
    resolve();
  };
  const socket = await Bun.connect({
    unix: bridge.env[BRIDGE_SOCKET_ENV]!,
    socket: { data: () => {}, drain: pump, close: end, error: end },
  });
  socket.write(first);
  pump(socket);
  const timer = setTimeout(resolve, 20_000);
  await promise;
  clearTimeout(timer);
  socket.terminate();
  return { sent, hungUp };
}

describe("the bridge socket against a client that never ends its line", () => {
  const LIMIT = 64 * 1024 * 1024;
  // What the kernel's socket buffers take before the run reads them, with room to spare.
  const SLACK = 8 * 1024 * 1024;

  test("one with the run's token is hung up past the line cap, not read to the end", async () => {
    const bridge = openToolBridge();
    try {
      const start = `{"token":${JSON.stringify(bridge.env[BRIDGE_TOKEN_ENV])},"id":1,"method":"call","name":"x","arguments":{"v":"`;
      const { sent, hungUp } = await flood(bridge, start, LIMIT);
      expect(hungUp).toBe(true);
      expect(sent).toBeLessThan(MAX_REQUEST_BYTES + SLACK);
    } finally {
      bridge.close();
    }
  }, 30_000);

  test("one without the token is hung up within its first bytes", async () => {
    for (const start of ["aaaa", `{"token":"${crypto.randomUUID()}","id":1,`, `{"id":1,"token":"x"}`]) {
      const bridge = openToolBridge();
      try {
        const { sent, hungUp } = await flood(bridge, start, LIMIT);
        expect({ start, hungUp }).toEqual({ start, hungUp: true });
        expect(sent).toBeLessThan(SLACK);
      } finally {
        bridge.close();
      }
    }
  }, 30_000);
});
