import type { DomainProbe } from "../../src/modules/domains/probe.ts";

/** What the fake web serves for one host and path. */
export interface FakeResponse {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Answer only after this long (a slow site). */
  delayMs?: number;
}

const txt = new Map<string, string[]>();
const files = new Map<string, FakeResponse>();
const hostHeader = "x-test-host";
let server: ReturnType<typeof Bun.serve> | undefined;

function localServer() {
  if (server) return server;
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const found = files.get(`${request.headers.get(hostHeader)}${url.pathname}`);
      if (!found) return new Response("not found", { status: 404 });
      if (found.delayMs) await Bun.sleep(found.delayMs);
      return new Response(found.body ?? "", { status: found.status ?? 200, headers: found.headers });
    },
  });
  // The test run must be able to exit while this server is still listening.
  server.unref();
  return server;
}

/** Publishes TXT records at a DNS name in the in-test resolver. */
export function publishTxt(name: string, records: string[]): void {
  txt.set(name, records);
}

/** Serves a response at `https://{host}{path}` on the local test web server. */
export function publishFile(host: string, path: string, response: FakeResponse): void {
  files.set(`${host}${path}`, response);
}

/**
 * A probe over an in-test resolver and a real local HTTP server: HTTPS URLs are
 * sent to the loopback server with the original host in a header, so the real
 * fetch (redirect handling, status, body limits) runs.
 */
export const testDomainProbe: DomainProbe = {
  async txtRecords(name) {
    return txt.get(name) ?? [];
  },
  async fetch(url, init) {
    const target = new URL(url);
    const local = `http://127.0.0.1:${localServer().port}${target.pathname}${target.search}`;
    return fetch(local, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), [hostHeader]: target.hostname },
    });
  },
};
