import { afterEach, describe, expect, test } from "bun:test";
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from "node:net";
import { createServer as createTlsServer, type TLSSocket } from "node:tls";
import { enqueueEvent } from "../../src/modules/outbox/service.ts";
import { createWebhookSender } from "../../src/modules/webhooks/sender.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { buildIdentityApp, callIdentity } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";
import {
  startReceiver,
  type TestReceiver,
  testCertificate,
  testClock,
  testResolver,
  testSender,
  testSweeper,
} from "../support/webhooks.ts";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const close of cleanup.splice(0)) close();
});

function receiver(): TestReceiver {
  const started = startReceiver();
  cleanup.push(() => started.stop());
  return started;
}

/** A raw TLS (or plain TCP) server on loopback whose every connection `onSocket` handles by hand. */
async function rawServer(onSocket: (socket: Socket | TLSSocket) => void, tls = true): Promise<number> {
  const { cert, key } = testCertificate();
  const server: TcpServer = tls ? createTlsServer({ cert, key }, onSocket) : createTcpServer(onSocket);
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => server.close());
  return (server.address() as { port: number }).port;
}

/** Waits for a request's head (through the blank line), then runs `then`. */
function afterRequestHead(socket: Socket, then: () => void) {
  let seen = "";
  socket.on("error", () => {});
  socket.on("data", (chunk) => {
    if (seen.includes("\r\n\r\n")) return;
    seen += chunk.toString("latin1");
    if (seen.includes("\r\n\r\n")) then();
  });
}

const delivery = (url: string) => ({
  url,
  headers: { "content-type": "application/json", "x-svc-delivery-id": crypto.randomUUID() },
  body: '{"id":"x"}',
});

const resolvingTo =
  (...addresses: string[]) =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

describe("the SSRF guard at delivery time", () => {
  test.each([
    ["10.0.0.1"],
    ["172.16.5.4"],
    ["192.168.1.10"],
    ["127.0.0.1"],
    ["169.254.169.254"],
    ["100.64.0.1"],
    ["224.0.0.251"],
    ["0.0.0.0"],
    ["::"],
    ["::1"],
    ["fe80::1"],
    ["fd00:ec2::254"],
    ["ff02::1"],
    ["::ffff:127.0.0.1"],
    ["::ffff:169.254.169.254"],
    ["::ffff:a00:1"],
  ])("refuses a host resolving to %s, and makes no connection", async (address) => {
    const hooks = receiver();
    const sender = createWebhookSender({
      allowLoopback: false,
      extraCa: testCertificate().cert,
      resolveHost: resolvingTo(address),
    });
    cleanup.push(() => sender.close());
    const outcome = await sender.send(delivery(`https://hooks.test:${hooks.port}/x`));
    expect(outcome).toMatchObject({
      succeeded: false,
      statusCode: null,
      unreachable: true,
      error: `refused: the host resolves to a non-public address (${address})`,
    });
    expect(hooks.received).toEqual([]);
  });

  test("one non-public address among public ones is enough to refuse", async () => {
    const sender = createWebhookSender({ allowLoopback: false, resolveHost: resolvingTo("93.184.215.14", "10.1.2.3") });
    cleanup.push(() => sender.close());
    const outcome = await sender.send(delivery("https://hooks.test/x"));
    expect(outcome.error).toBe("refused: the host resolves to a non-public address (10.1.2.3)");
  });

  test("WEBHOOK_ALLOW_LOOPBACK lets loopback through, and nothing else", async () => {
    const hooks = receiver();
    for (const [address, allowed] of [
      ["127.0.0.1", true],
      ["10.0.0.1", false],
      ["::ffff:169.254.169.254", false],
      ["192.168.0.1", false],
    ] as const) {
      const sender = createWebhookSender({
        allowLoopback: true,
        extraCa: testCertificate().cert,
        resolveHost: resolvingTo(address),
      });
      const outcome = await sender.send(delivery(`https://hooks.test:${hooks.port}/x`));
      sender.close();
      expect({ address, succeeded: outcome.succeeded }).toEqual({ address, succeeded: allowed });
    }
    expect(hooks.received.length).toBe(1);
  });

  test("the connection goes to the address the check resolved: a second DNS answer cannot rebind it", async () => {
    const hooks = receiver();
    let lookups = 0;
    // The first answer passes the check; any later one would point inside the network.
    const rebinding = async () => {
      lookups++;
      return [{ address: lookups === 1 ? "127.0.0.1" : "10.0.0.1", family: 4 }];
    };
    const sender = createWebhookSender({
      allowLoopback: true,
      extraCa: testCertificate().cert,
      resolveHost: rebinding,
    });
    cleanup.push(() => sender.close());
    // rebind.hooks.test exists only in this resolver: reaching the receiver proves the socket used its answer.
    const first = await sender.send(delivery(`https://rebind.hooks.test:${hooks.port}/a`));
    const second = await sender.send(delivery(`https://rebind.hooks.test:${hooks.port}/b`));
    expect([first.succeeded, second.succeeded]).toEqual([true, true]);
    expect(hooks.received.map((r) => [r.path, r.headers.host])).toEqual([
      ["/a", `rebind.hooks.test:${hooks.port}`],
      ["/b", `rebind.hooks.test:${hooks.port}`],
    ]);
    // The kept-alive connection checked once is reused; a new one is checked again and refused.
    expect(lookups).toBe(1);
    sender.close();
    const fresh = createWebhookSender({ allowLoopback: true, extraCa: testCertificate().cert, resolveHost: rebinding });
    cleanup.push(() => fresh.close());
    const third = await fresh.send(delivery(`https://rebind.hooks.test:${hooks.port}/c`));
    expect(third.error).toBe("refused: the host resolves to a non-public address (10.0.0.1)");
    expect(hooks.received.length).toBe(2);
  });

  test("a URL naming an IP address is refused without a connection, whatever got it stored", async () => {
    const sender = testSender();
    cleanup.push(() => sender.close());
    for (const url of ["https://127.0.0.1:1/x", "https://[::1]:1/x", "http://localhost:1/x"]) {
      const outcome = await sender.send(delivery(url));
      expect(outcome.succeeded).toBe(false);
      expect(outcome.error).toStartWith("refused:");
    }
  });
});

describe("bad receivers", () => {
  test("TLS is verified against the host name: an untrusted or mismatched certificate fails", async () => {
    const hooks = receiver();
    const untrusting = createWebhookSender({ allowLoopback: true, resolveHost: testResolver });
    cleanup.push(() => untrusting.close());
    const untrusted = await untrusting.send(delivery(hooks.url("/x")));
    expect(untrusted).toMatchObject({ succeeded: false, unreachable: true });
    expect(untrusted.error).toStartWith("TLS failed");
    const sender = createWebhookSender({
      allowLoopback: true,
      extraCa: testCertificate().cert,
      resolveHost: resolvingTo("127.0.0.1"),
    });
    cleanup.push(() => sender.close());
    const mismatched = await sender.send(delivery(`https://elsewhere.example.org:${hooks.port}/x`));
    expect(mismatched.error).toStartWith("TLS failed");
    expect(hooks.received).toEqual([]);
  });

  test("a receiver that never answers: no answer within the window", async () => {
    const hooks = receiver();
    hooks.on("/hang", () => new Promise<Response>(() => {}));
    const sender = testSender({ timeoutMs: 300 });
    cleanup.push(() => sender.close());
    const outcome = await sender.send(delivery(hooks.url("/hang")));
    expect(outcome).toMatchObject({
      succeeded: false,
      statusCode: null,
      error: "no answer within 0.3 s",
      unreachable: true,
    });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(290);
    expect(outcome.latencyMs).toBeLessThan(1500);
  });

  test("an answer dripped byte by byte: the status must arrive within the window, the body is cut there", async () => {
    const slowHead = await rawServer((socket) =>
      afterRequestHead(socket, () => {
        const head = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        let i = 0;
        const timer = setInterval(() => {
          if (socket.destroyed || i >= head.length) return clearInterval(timer);
          socket.write(head[i++] as string);
        }, 40);
        socket.on("close", () => clearInterval(timer));
      }),
    );
    const slowBody = await rawServer((socket) =>
      afterRequestHead(socket, () => {
        socket.write("HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n");
        const timer = setInterval(() => {
          if (socket.destroyed) return clearInterval(timer);
          socket.write("z");
        }, 40);
        socket.on("close", () => clearInterval(timer));
      }),
    );
    const sender = testSender({ timeoutMs: 500 });
    cleanup.push(() => sender.close());
    const head = await sender.send(delivery(`https://localhost:${slowHead}/x`));
    expect(head).toMatchObject({ succeeded: false, statusCode: null, unreachable: true });
    expect(head.error).toStartWith("no answer within");
    const body = await sender.send(delivery(`https://localhost:${slowBody}/x`));
    expect(body).toMatchObject({ succeeded: true, statusCode: 200, error: null });
    expect(body.responseSample).toMatch(/^z+$/);
    expect(body.latencyMs).toBeLessThan(1500);
  });

  test("a reset, a closed connection, a refused port and a non-TLS server are each a clear failure", async () => {
    const reset = await rawServer((socket) => afterRequestHead(socket, () => (socket as Socket).resetAndDestroy()));
    const closed = await rawServer((socket) => afterRequestHead(socket, () => socket.destroy()));
    const plain = await rawServer((socket) => {
      socket.on("error", () => {});
      socket.end("HTTP/1.1 200 OK\r\n\r\nnot tls");
    }, false);
    const refusedPort = await rawServer(() => {}, false);
    cleanup.splice(-1)[0]?.();
    const sender = testSender({ timeoutMs: 2000 });
    cleanup.push(() => sender.close());
    const errors: Record<string, string | null> = {};
    for (const [name, port] of Object.entries({ reset, closed, plain, refused: refusedPort })) {
      const outcome = await sender.send(delivery(`https://localhost:${port}/x`));
      expect({ name, succeeded: outcome.succeeded, unreachable: outcome.unreachable }).toEqual({
        name,
        succeeded: false,
        unreachable: true,
      });
      errors[name] = outcome.error;
    }
    expect(errors.reset).toBe("connection reset before an answer");
    expect(errors.closed).toBe("connection reset before an answer");
    expect(errors.refused).toBe("connection refused");
    expect(errors.plain).toMatch(/^(TLS failed|connection reset)/);
  });
});

describe("the sweep with bad receivers", () => {
  test("endpoints that hang do not hold up another endpoint, and are paused after their timeout", async () => {
    const { ctx } = await testRuntime();
    const { app } = await buildIdentityApp({ WEBHOOK_ALLOW_LOOPBACK: true });
    const hooks = receiver();
    const fastTimes: number[] = [];
    hooks.on("/hang-a", () => new Promise<Response>(() => {}));
    hooks.on("/hang-b", () => new Promise<Response>(() => {}));
    hooks.on("/fast", () => {
      fastTimes.push(performance.now());
      return new Response("ok");
    });
    hooks.on("/odd", () => new Response(new Uint8Array([0x61, 0x00, 0xff, 0xfe, 0x62]), { status: 500 }));
    const org = await createTestOrg();
    const key = await org.keyWith(["identity:read", "identity:write"]);
    const ids: Record<string, string> = {};
    for (const name of ["hang-a", "hang-b", "fast", "odd"]) {
      const res = await callIdentity("POST", "/api/v1/identity/webhooks", {
        app,
        key,
        body: { url: hooks.url(`/${name}`), event_types: ["invite.claimed"] },
      });
      ids[name] = res.body.id;
    }
    for (let i = 0; i < 12; i++) await enqueueEvent(ctx.sql, { orgId: org.id, type: "invite.claimed", data: { i } });
    const timeoutMs = 1500;
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now, sender: testSender({ timeoutMs }), concurrency: 4 });
    const started = performance.now();
    const report = await sweeper.sweep();
    const took = performance.now() - started;

    // The fast endpoint got all 12 while the hanging ones were still within their window.
    expect(fastTimes.length).toBe(12);
    expect((fastTimes.at(-1) as number) - started).toBeLessThan(timeoutMs);
    // One window of waiting for the hanging endpoints, not one per delivery.
    expect(took).toBeLessThan(2 * timeoutMs + 1000);
    expect(report.attempts).toBeGreaterThanOrEqual(12 + 12 + 2);

    const rows = await ctx.sql<
      { endpoint_id: string; status: string; attempt_count: number; last_error: string | null }[]
    >`
      SELECT endpoint_id, status, attempt_count, last_error FROM webhook_deliveries
      WHERE endpoint_id = ANY (${Object.values(ids)}::uuid[])`;
    const of = (name: string) => rows.filter((r) => r.endpoint_id === ids[name]);
    expect(of("fast").every((r) => r.status === "delivered")).toBe(true);
    for (const name of ["hang-a", "hang-b"]) {
      const tried = of(name).filter((r) => r.attempt_count === 1);
      // At most one window per endpoint (its per-endpoint slots), the rest wait out the pause.
      expect(tried.length).toBeGreaterThanOrEqual(1);
      expect(tried.length).toBeLessThanOrEqual(4);
      expect(tried.every((r) => r.last_error === "no answer within 1.5 s")).toBe(true);
      expect(of(name).every((r) => r.status === "pending")).toBe(true);
      const endpoint = await callIdentity("GET", `/api/v1/identity/webhooks/${ids[name]}`, { app, key });
      expect(endpoint.body.paused_until).toBe(new Date(clock.now().getTime() + 60_000).toISOString());
      expect(endpoint.body.failing_since).toBe(clock.now().toISOString());
    }
    // A body with NUL and invalid UTF-8 is recorded, made storable.
    const odd = await callIdentity("GET", `/api/v1/identity/webhooks/${ids.odd}/deliveries?limit=1`, { app, key });
    expect(odd.body.items[0].attempts[0]).toMatchObject({ status_code: 500, response_sample: "a\uFFFD\uFFFD\uFFFDb" });

    // While paused, the hanging endpoints' deliveries are not tried; after the pause they are, one at a time.
    const before = hooks.received.filter((r) => r.path.startsWith("/hang")).length;
    clock.advance(30_000);
    await sweeper.sweep();
    expect(hooks.received.filter((r) => r.path.startsWith("/hang")).length).toBe(before);
  }, 20_000);
});
