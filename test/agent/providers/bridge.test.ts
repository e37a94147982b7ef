import { describe, expect, test } from "bun:test";
import { BRIDGE_SOCKET_ENV, BRIDGE_TOKEN_ENV, lineReader, openToolBridge } from "../../../src/agent/providers/agent-cli/bridge.ts";

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
      const line = JSON.stringify({ token: bridge.env[BRIDGE_TOKEN_ENV], id: 1, method: "call", name: "set_value", arguments: { value: "4µ7 Ω" } });
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
});
