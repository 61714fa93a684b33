import { describe, expect, test } from "bun:test";
import { expiryJobName, expiryTask } from "../../src/jobs/expiry.ts";
import { expiries } from "../../src/jobs/index.ts";
import { runTick } from "../../src/jobs/schedule.ts";
import { clickTokenLifetimeDays } from "../../src/modules/click-tokens/service.ts";
import { agentSessionWithToken, visibleOwner } from "../support/click-manifests.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { validEvents } from "../support/telemetry-events.ts";

const dayMs = 86_400_000;
const clickTokens = expiries.find((expiry) => expiry.name === "click-tokens");

async function liveTokens(sessionId: string): Promise<number> {
  const { ctx } = await testRuntime();
  const [row] = await ctx.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM click_tokens WHERE session_id = ${sessionId}::uuid`;
  return row?.n ?? 0;
}

describe("click-token expiry", () => {
  test("the resolver refuses a token from its expires_at on, for lookups and for reported clicks", async () => {
    const owner = await visibleOwner();
    const clickUrl = `https://${owner.domain}/a`;
    const { token, sessionId } = await agentSessionWithToken({
      clickUrl,
      events: [validEvents.grounded(owner.domain)],
    });
    const network = await createTestOrg({ type: "platform" });
    expect((await call("GET", `/ctx/${token}`, { key: network.key })).status).toBe(200);
    const { ctx } = await testRuntime();
    await ctx.sql`UPDATE click_tokens SET expires_at = now() WHERE session_id = ${sessionId}::uuid`;
    expect((await call("GET", `/ctx/${token}`, { key: network.key })).status).toBe(404);
    const click = await call("POST", "/events", {
      key: network.key,
      body: {
        document_type: "event",
        schema_version: "1.0",
        ctx_token: token,
        event: { type: "content_engaged", timestamp: new Date().toISOString(), content_url: clickUrl, data: {} },
      },
    });
    expect(click.status).toBe(400);
    expect(click.body.errors[0].message).toBe("unknown or expired click token");
  });

  test(`the sweep deletes tokens ${clickTokenLifetimeDays} days after issue, not before (injected clock)`, async () => {
    if (!clickTokens) throw new Error("the click-token expiry is not scheduled");
    const { token, sessionId } = await agentSessionWithToken({ clickUrl: "https://example.org/x", events: [] });
    expect(token).toMatch(/^ctx_/);
    const { ctx } = await testRuntime();
    const issuedAt = Date.now();
    await clickTokens.sweep(ctx.sql, new Date(issuedAt + (clickTokenLifetimeDays - 1) * dayMs));
    expect(await liveTokens(sessionId)).toBe(1);
    const swept = await clickTokens.sweep(ctx.sql, new Date(issuedAt + clickTokenLifetimeDays * dayMs + 1000));
    expect(swept).toBeGreaterThanOrEqual(1);
    expect(await liveTokens(sessionId)).toBe(0);
  });

  test("the job sweeps once per tick across instances", async () => {
    if (!clickTokens) throw new Error("the click-token expiry is not scheduled");
    const { sessionId } = await agentSessionWithToken({ clickUrl: "https://example.org/y", events: [] });
    const { ctx } = await testRuntime();
    // Two instances fire for the same tick, 91 days from now.
    const tick = new Date(Math.floor((Date.now() + (clickTokenLifetimeDays + 1) * dayMs) / 1000) * 1000);
    const name = expiryJobName(clickTokens);
    const task = expiryTask(ctx.sql, clickTokens);
    const ran = await Promise.all([
      runTick(ctx.sql, ctx.log, name, tick, task),
      runTick(ctx.sql, ctx.log, name, tick, task),
    ]);
    expect(ran.filter(Boolean)).toHaveLength(1);
    expect(await liveTokens(sessionId)).toBe(0);
    const claims = await ctx.sql`SELECT instance FROM job_ticks WHERE job = ${name} AND tick = ${tick}`;
    expect(claims).toHaveLength(1);
  });
});
