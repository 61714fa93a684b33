import { describe, expect, test } from "bun:test";
import { insertEvents } from "../support/events.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";

const hourMs = 3_600_000;

/** Per reporter scope (keyed by the organisation, so only this test's rows): first times and net deltas. */
async function reporterScopes(orgId: string) {
  const { ctx } = await testRuntime();
  const firsts = await ctx.sql<{ key: string; first_seen: Date; sessions: number }[]>`
    SELECT concat_ws('|', kind, k1, k2, k3) AS key, first_seen, count(*)::int AS sessions
    FROM session_scope_firsts WHERE kind LIKE 'P%' AND k1 = ${orgId}
    GROUP BY 1, 2 ORDER BY 1, 2`;
  const deltas = await ctx.sql<{ key: string; first_seen: Date; sessions: number }[]>`
    SELECT concat_ws('|', kind, k1, k2, k3) AS key, first_seen, sum(delta)::int AS sessions
    FROM session_first_deltas WHERE kind LIKE 'P%' AND k1 = ${orgId}
    GROUP BY 1, 2 HAVING sum(delta) <> 0 ORDER BY 1, 2`;
  return { firsts, deltas };
}

describe("session firsts are recorded once per statement", () => {
  test("events of one statement, out of order and late, give each session its earliest time per scope", async () => {
    const { ctx } = await testRuntime();
    const agent = await createTestOrg({ type: "agent" });
    const site = uniqueDomain();
    const host = `news.${site}`;
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];
    const t0 = Date.UTC(2026, 0, 5, 10);
    const at = (hours: number) => new Date(t0 + hours * hourMs);
    const event = (sessionId: string, hours: number, path: string) => ({
      event_time: at(hours),
      org_id: agent.id,
      content_url: `https://${host}${path}`,
      session_id: sessionId,
    });

    // One statement: the same fine key three times out of order, a second URL, a second session.
    await insertEvents(ctx.sql, [
      event(first, 3, "/a"),
      event(first, 1, "/a"),
      event(first, 2, "/a"),
      event(first, 1.5, "/b"),
      event(second, 4, "/b"),
      { event_time: at(0.5), org_id: agent.id, content_url: `https://${host}/a` },
    ]);
    const owner = await ctx.sql<{ k1: string; first_seen: Date }[]>`
      SELECT k1, first_seen FROM session_scope_firsts WHERE kind = 'O' AND session_id = ${first} ORDER BY k1`;
    expect([...owner]).toEqual([
      { k1: "example.com", first_seen: at(1) },
      { k1: host, first_seen: at(1) },
      { k1: site, first_seen: at(1) },
    ]);
    const urls = await ctx.sql<{ k1: string; first_seen: Date }[]>`
      SELECT k1, first_seen FROM session_scope_firsts WHERE kind = 'U' AND session_id = ${first} ORDER BY first_seen`;
    expect([...urls]).toEqual([
      { k1: new Bun.CryptoHasher("md5").update(`https://${host}/a`).digest("hex"), first_seen: at(1) },
      { k1: new Bun.CryptoHasher("md5").update(`https://${host}/b`).digest("hex"), first_seen: at(1.5) },
    ]);
    const [hosts] = await ctx.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM content_hosts WHERE host = ${host}`;
    expect(hosts?.n).toBe(1);

    let { firsts, deltas } = await reporterScopes(agent.id);
    expect(deltas).toEqual(firsts);
    expect(firsts.filter((row) => row.key === `P|${agent.id}||`)).toEqual([
      { key: `P|${agent.id}||`, first_seen: at(1), sessions: 1 },
      { key: `P|${agent.id}||`, first_seen: at(4), sessions: 1 },
    ]);

    // A later statement with late events moves both sessions earlier, once each.
    await insertEvents(ctx.sql, [event(first, 0, "/b"), event(second, 3, "/a"), event(second, 2.5, "/a")]);
    ({ firsts, deltas } = await reporterScopes(agent.id));
    expect(deltas).toEqual(firsts);
    expect(firsts.filter((row) => row.key === `P|${agent.id}||`)).toEqual([
      { key: `P|${agent.id}||`, first_seen: at(0), sessions: 1 },
      { key: `P|${agent.id}||`, first_seen: at(2.5), sessions: 1 },
    ]);
  });

  test("events skipped as duplicates by ingest are not counted", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const agent = await createTestOrg({ type: "agent" });
    const host = owner.domain as string;
    const sessionId = crypto.randomUUID();
    const events = [
      validEvents.retrieved(host, { timestamp: ago(600) }),
      validEvents.retrieved(host, { timestamp: ago(300) }),
    ];
    const post = async (body: unknown) => (await call("POST", "/events", { key: agent.key, body })).body.events_created;
    expect(await post(batch(events, { session_id: sessionId }))).toBe(2);
    const before = await reporterScopes(agent.id);
    expect(before.deltas).toEqual(before.firsts);

    // A retry, and the first event again with a URL of its own: both are duplicates of stored events.
    expect(await post(batch(events, { session_id: sessionId }))).toBe(0);
    const altered = { ...events[0], content_url: `https://${host}/never-stored` };
    expect(await post(batch([altered], { session_id: sessionId }))).toBe(0);
    const after = await reporterScopes(agent.id);
    expect(after).toEqual(before);
    const [rows] = await ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM session_first_deltas WHERE kind LIKE 'P%' AND k1 = ${agent.id}`;
    expect(rows?.n).toBe(before.firsts.length);
  });
});
