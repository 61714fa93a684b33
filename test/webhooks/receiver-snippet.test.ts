import { afterAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestOrg } from "../support/fixtures.ts";
import { buildIdentityApp, callIdentity } from "../support/identity.ts";
import { tempDir } from "../support/temp-dirs.ts";
import { startReceiver, testCertificate, testClock, testSweeper } from "../support/webhooks.ts";

/** The receiver snippet exactly as the README shows it, written to a file and imported. */
const readme = await Bun.file(join(import.meta.dir, "../../README.md")).text();
const block = /<!-- receiver-snippet:start -->\n```ts\n([\s\S]*?)\n```\n<!-- receiver-snippet:end -->/.exec(readme);
if (!block) throw new Error("the README has no receiver snippet between its markers");
const dir = tempDir("receiver-snippet-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "receiver.ts"), block[1] as string);
interface WebhookEvent {
  id: string;
  type: string;
}
interface Snippet {
  verifyWebhook(
    rawBody: string,
    headers: Headers,
    secret: string,
    processed: { has(deliveryId: string): boolean },
    nowSeconds?: number,
  ): { ok: true; deliveryId: string; duplicate: boolean; event: WebhookEvent } | { ok: false; reason: string };
  serveWebhooks(
    secret: string,
    handle: (event: WebhookEvent) => void,
    options?: { port?: number; tls?: { cert: string; key: string } },
  ): ReturnType<typeof Bun.serve>;
}
const snippet = (await import(join(dir, "receiver.ts"))) as Snippet;

const path = "/api/v1/identity/webhooks";
const { app } = await buildIdentityApp({ WEBHOOK_ALLOW_LOOPBACK: true });

test("the README's receiver verifies real deliveries, drops redeliveries, and follows a secret rotation", async () => {
  const { cert, key: tlsKey } = testCertificate();
  const org = await createTestOrg();
  const key = await org.keyWith(["identity:read", "identity:write"]);
  let secret = "";
  const handled: { id: string; type: string }[] = [];
  // The snippet's own server, given the test certificate so the service can reach it over HTTPS.
  let server = snippet.serveWebhooks("pending", () => {}, { tls: { cert, key: tlsKey } });
  const port = server.port as number;
  const created = await callIdentity("POST", path, {
    app,
    key,
    body: { url: `https://localhost:${port}/hooks`, event_types: ["invite.claimed"] },
  });
  const id = created.body.id as string;
  secret = created.body.secret;
  server.stop(true);
  server = snippet.serveWebhooks(secret, (event) => handled.push({ id: event.id, type: event.type }), {
    port,
    tls: { cert, key: tlsKey },
  });
  try {
    const clock = testClock();
    const sweeper = await testSweeper({ clock: clock.now });
    const pinged = await callIdentity("POST", `${path}/${id}/ping`, { app, key });
    await sweeper.sweep();
    expect(handled).toEqual([{ id: pinged.body.event_id, type: "ping" }]);
    const delivered = await callIdentity("GET", `${path}/${id}/deliveries/${pinged.body.id}`, { app, key });
    expect(delivered.body).toMatchObject({ status: "delivered", last_status_code: 200 });

    // A redelivery carries the same delivery id: answered 200, not handled twice.
    await callIdentity("POST", `${path}/${id}/deliveries/${pinged.body.id}/redeliver`, { app, key });
    clock.advance(1000);
    await sweeper.sweep();
    expect(handled.length).toBe(1);
    const again = await callIdentity("GET", `${path}/${id}/deliveries/${pinged.body.id}`, { app, key });
    expect(again.body).toMatchObject({ status: "delivered" });
    expect(again.body.attempts.length).toBe(2);

    // Rotation: a receiver still on the old secret keeps verifying during the overlap, one on the new one too.
    const rotated = await callIdentity("POST", `${path}/${id}/rotate-secret`, { app, key });
    for (const receiverSecret of [secret, rotated.body.secret as string]) {
      server.stop(true);
      server = snippet.serveWebhooks(receiverSecret, (event) => handled.push({ id: event.id, type: event.type }), {
        port,
        tls: { cert, key: tlsKey },
      });
      await callIdentity("POST", `${path}/${id}/ping`, { app, key });
      clock.advance(1000);
      await sweeper.sweep();
    }
    expect(handled.length).toBe(3);
    const failed = await callIdentity("GET", `${path}/${id}/deliveries?status=pending`, { app, key });
    expect(failed.body.total).toBe(0);
  } finally {
    server.stop(true);
  }
});

test("the README's verifier refuses tampered bodies, other secrets and stale timestamps, and spots duplicates", async () => {
  const hooks = startReceiver();
  try {
    const org = await createTestOrg();
    const key = await org.keyWith(["identity:read", "identity:write"]);
    const created = await callIdentity("POST", path, {
      app,
      key,
      body: { url: hooks.url("/raw"), event_types: ["invite.claimed"] },
    });
    await callIdentity("POST", `${path}/${created.body.id}/ping`, { app, key });
    await (await testSweeper({ clock: testClock().now })).sweep();
    const [request] = hooks.received;
    if (!request) throw new Error("no delivery received");
    const headers = new Headers(request.headers);
    const ts = Number(headers.get("x-svc-timestamp"));
    const secret = created.body.secret as string;
    const none = new Set<string>();

    const ok = snippet.verifyWebhook(request.body, headers, secret, none, ts);
    expect(ok).toMatchObject({ ok: true, duplicate: false, deliveryId: headers.get("x-svc-delivery-id") });
    expect(
      snippet.verifyWebhook(request.body, headers, secret, new Set([ok.ok ? ok.deliveryId : ""]), ts),
    ).toMatchObject({
      ok: true,
      duplicate: true,
    });
    const refusals = [
      snippet.verifyWebhook(request.body.replace("ping", "pong"), headers, secret, none, ts),
      snippet.verifyWebhook(request.body, headers, `${secret}x`, none, ts),
      snippet.verifyWebhook(request.body, headers, secret, none, ts + 301),
      snippet.verifyWebhook(request.body, headers, secret, none, ts - 301),
      snippet.verifyWebhook(
        request.body,
        new Headers({ ...request.headers, "x-svc-signature": "zz" }),
        secret,
        none,
        ts,
      ),
      snippet.verifyWebhook(request.body, new Headers({ ...request.headers, "x-svc-timestamp": "" }), secret, none, ts),
    ];
    expect(refusals.map((r) => (r.ok ? "accepted" : r.reason))).toEqual([
      "bad signature",
      "bad signature",
      "missing or stale timestamp",
      "missing or stale timestamp",
      "bad signature",
      "missing or stale timestamp",
    ]);
    // Within the tolerance either way: accepted.
    expect(snippet.verifyWebhook(request.body, headers, secret, none, ts + 300).ok).toBe(true);
    expect(snippet.verifyWebhook(request.body, headers, secret, none, ts - 300).ok).toBe(true);
  } finally {
    hooks.stop();
  }
});
