/**
 * The webhook benchmark's receiver, a process of its own so that the service's
 * resident memory and CPU are measured alone. HTTPS (Bun.serve with TLS) on a
 * free loopback port: `/ok/…` answers 200 at once, `/hang/…` never answers.
 * Counts each X-Svc-Delivery-Id it gets on `/ok/`, and serves the counts as JSON
 * on a plain-HTTP stats port. Prints `{"https_port", "stats_port"}` once listening.
 *
 *   CERT_FILE=… KEY_FILE=… bun bench/webhook-receiver.ts
 */
import { readFileSync } from "node:fs";

const cert = readFileSync(process.env.CERT_FILE as string, "utf8");
const key = readFileSync(process.env.KEY_FILE as string, "utf8");

const seen = new Map<string, number>();
let received = 0;
let duplicates = 0;
let hanging = 0;

const hooks = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  tls: { cert, key },
  idleTimeout: 60,
  async fetch(request) {
    const path = new URL(request.url).pathname;
    await request.arrayBuffer();
    if (path.startsWith("/hang/")) {
      hanging++;
      return new Promise<Response>(() => {});
    }
    const id = request.headers.get("x-svc-delivery-id") ?? "";
    const times = (seen.get(id) ?? 0) + 1;
    seen.set(id, times);
    received++;
    if (times > 1) duplicates++;
    return new Response("ok");
  },
});

const stats = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    if (new URL(request.url).pathname === "/ids") return Response.json([...seen.keys()]);
    return Response.json({ received, unique: seen.size, duplicates, hanging });
  },
});

console.log(JSON.stringify({ https_port: hooks.port, stats_port: stats.port }));
