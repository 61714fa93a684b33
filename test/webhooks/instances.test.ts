import { afterAll, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import type { Sql } from "../../src/db/sql.ts";
import { enqueueEvent } from "../../src/modules/outbox/service.ts";
import { dispatchOutbox } from "../../src/modules/webhooks/queue.ts";
import { WebhookSweeper } from "../../src/modules/webhooks/sweep.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { buildIdentityApp, callIdentity } from "../support/identity.ts";
import { testRuntime } from "../support/runtime.ts";
import { startReceiver, testClock, testSender } from "../support/webhooks.ts";

const extraPools: Sql[] = [];
afterAll(async () => {
  for (const pool of extraPools) await pool.end({ timeout: 5 });
});

test("sweepers running at once (instances) send each delivery exactly once", async () => {
  const { ctx, db } = await testRuntime();
  const { app } = await buildIdentityApp({ WEBHOOK_ALLOW_LOOPBACK: true });
  const hooks = startReceiver();
  try {
    const org = await createTestOrg();
    const key = await org.keyWith(["identity:read", "identity:write"]);
    const endpoints: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await callIdentity("POST", "/api/v1/identity/webhooks", {
        app,
        key,
        body: { url: hooks.url(`/e${i}`), event_types: ["invite.claimed"] },
      });
      endpoints.push(res.body.id);
    }
    for (let i = 0; i < 40; i++) await enqueueEvent(ctx.sql, { orgId: org.id, type: "invite.claimed", data: { i } });

    // Each sweeper has its own pool on a server (as separate instances would); the
    // embedded engine has one connection, on which their statements interleave.
    const poolFor = () => {
      if (db.kind === "embedded") return ctx.sql;
      const pool = connect(db.url, 4);
      extraPools.push(pool);
      return pool;
    };
    const clock = testClock();
    const sweepers = Array.from(
      { length: 3 },
      () =>
        new WebhookSweeper({
          sql: poolFor(),
          log: ctx.log,
          secrets: ctx.webhookSecrets as NonNullable<typeof ctx.webhookSecrets>,
          sender: testSender(),
          clock: clock.now,
          concurrency: 6,
          perEndpoint: 4,
          disableAfterMs: 5 * 86_400_000,
        }),
    );
    // The backlog is there before they start (a sweep that finds the outbox taken and nothing due yet ends).
    await dispatchOutbox(ctx.sql, clock.now());
    const reports = await Promise.all(sweepers.map((s) => s.sweep()));
    await Promise.all(sweepers.map((s) => s.sweep()));

    const ids = hooks.received.map((r) => r.headers["x-svc-delivery-id"]);
    expect(ids.length).toBe(200);
    expect(new Set(ids).size).toBe(200);
    const [row] = await ctx.sql<{ delivered: number; attempts: number }[]>`
      SELECT count(*) FILTER (WHERE d.status = 'delivered')::int AS delivered,
             (SELECT count(*)::int FROM webhook_attempts a JOIN webhook_deliveries x ON x.id = a.delivery_id
              WHERE x.endpoint_id = ANY (${endpoints}::uuid[])) AS attempts
      FROM webhook_deliveries d WHERE d.endpoint_id = ANY (${endpoints}::uuid[])`;
    expect(row).toEqual({ delivered: 200, attempts: 200 });
    // The work was shared out, not done by one sweeper while the others waited.
    expect(reports.filter((r) => r.delivered > 0).length).toBeGreaterThan(1);
    for (const sweeper of sweepers) await sweeper.stop();
  } finally {
    hooks.stop();
  }
}, 30_000);
