/**
 * A loopback HTTP server that plays a model API for provider tests: it records every request
 * (so tests can assert the wire shape) and answers with whatever the test scripts. It binds to
 * 127.0.0.1 only; no test reaches a real model API.
 */
import type { Server } from "bun";

export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string, `?` included (or empty). */
  search: string;
  headers: Record<string, string>;
  body: any;
  /** Arrival time (epoch ms). */
  at: number;
}

export type Reply = Response | Promise<Response>;

export interface Loopback {
  url: string;
  requests: RecordedRequest[];
  stop(): void;
}

/** Starts a server; `handler` gets each request (0-based index) and returns the reply. */
export function loopback(handler: (req: RecordedRequest, index: number) => Reply): Loopback {
  const requests: RecordedRequest[] = [];
  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const text = await request.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep the raw text
      }
      const recorded: RecordedRequest = {
        method: request.method,
        path: new URL(request.url).pathname,
        search: new URL(request.url).search,
        headers: Object.fromEntries(request.headers.entries()),
        body,
        at: Date.now(),
      };
      requests.push(recorded);
      return handler(recorded, requests.length - 1);
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}

export function json(value: unknown, init: ResponseInit = {}): Response {
  return new Response(JSON.stringify(value), {
    ...init,
    headers: { "content-type": "application/json", ...(init.headers ?? {}) },
  });
}

/** A reply that never comes: for timeouts and aborts. */
export function never(): Promise<Response> {
  return new Promise(() => {});
}

/** A port nothing listens on: start a server, note its port, stop it. */
export function closedPortUrl(): string {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("") });
  const url = `http://127.0.0.1:${server.port}`;
  server.stop(true);
  return url;
}
