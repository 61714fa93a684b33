import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { hostOfUrl } from "../../src/core/hosts.ts";
import type { Queryable } from "../../src/db/sql.ts";
import { insertEvents, type TestEvent } from "../support/events.ts";
import { seededRandom } from "../support/random.ts";
import { testRuntime } from "../support/runtime.ts";

const seed = Number(process.env.READS_SEED ?? Date.now() % 1_000_000);
const random = seededRandom(seed);
const rolledBack = new Error("rolled back");

/** Random statements of events over a few sessions, hosts and reporters, times in any order. */
function randomStatements(tag: string): TestEvent[][] {
  const hosts = [`a.x-${tag}.test`, `b.a.x-${tag}.test`, `x-${tag}.test`, `www.z-${tag}.co.uk`, `localhost-${tag}`];
  const orgs = [crypto.randomUUID(), crypto.randomUUID()];
  const sessions = Array.from({ length: 30 }, () => crypto.randomUUID());
  const start = Date.UTC(2026, 0, 1);
  return Array.from({ length: 12 }, () =>
    Array.from({ length: random.int(1, 60) }, () => ({
      event_time: new Date(start + Math.floor(random.next() * 20 * 86_400_000)),
      org_id: random.pick(orgs),
      agent_id: random.pick(["agent-a", "agent-b", null]),
      session_id: random.chance(0.1) ? null : random.pick(sessions),
      source_role: random.pick(["agent", "edge"]),
      content_url: random.chance(0.1) ? null : `https://${random.pick(hosts)}/page-${random.int(1, 4)}`,
    })),
  );
}

/** Session-first state and net deltas of the given events, removed afterwards so the next writer starts clean. */
async function takeState(sql: Queryable, events: TestEvent[]) {
  const sessions = [...new Set(events.flatMap((e) => (e.session_id ? [e.session_id] : [])))];
  const fine =
    await sql`SELECT * FROM session_fine_firsts WHERE session_id = ANY(${sessions}::uuid[]) ORDER BY 1, 2, 3, 4, 5, 6`;
  const firsts = await sql`
    SELECT kind, k1, k2, k3, session_id, first_seen FROM session_scope_firsts
    WHERE session_id = ANY(${sessions}::uuid[]) ORDER BY 1, 2, 3, 4, 5`;
  const keys = [...new Set(firsts.map((row) => row.k1 as string))];
  const deltas = await sql`
    SELECT kind, k1, k2, k3, first_seen, sum(delta)::int AS sessions FROM session_first_deltas
    WHERE k1 = ANY(${keys}) GROUP BY 1, 2, 3, 4, 5 HAVING sum(delta) <> 0 ORDER BY 1, 2, 3, 4, 5`;
  await sql`DELETE FROM session_fine_firsts WHERE session_id = ANY(${sessions}::uuid[])`;
  await sql`DELETE FROM session_scope_firsts WHERE session_id = ANY(${sessions}::uuid[])`;
  await sql`DELETE FROM session_first_deltas WHERE k1 = ANY(${keys})`;
  return { fine: [...fine], firsts: [...firsts], deltas: [...deltas] };
}

// The row trigger of sql/010 is the reference: the same statements of events run
// through it (on a scratch table, inside a transaction that is rolled back) and
// through record_session_firsts must leave the same state and the same net deltas.
test(`set-based session firsts equal the row trigger of 010 (seed ${seed})`, async () => {
  const { ctx } = await testRuntime();
  const migration = readFileSync(new URL("../../sql/010_session_firsts.sql", import.meta.url), "utf8");
  const rowTrigger = migration
    .slice(migration.indexOf("CREATE FUNCTION events_track_session_firsts"), migration.indexOf("CREATE TRIGGER"))
    .replace("events_track_session_firsts", "reference_session_firsts");
  const statements = randomStatements(crypto.randomUUID().slice(0, 8));
  const events = statements.flat();
  await ctx.sql
    .begin(async (tx) => {
      await tx.unsafe(rowTrigger);
      await tx`CREATE TABLE reference_events (LIKE events INCLUDING DEFAULTS)`;
      await tx`CREATE TRIGGER reference_session_firsts AFTER INSERT ON reference_events
               FOR EACH ROW EXECUTE FUNCTION reference_session_firsts()`;
      for (const statement of statements) {
        const rows = statement.map((e) => ({
          event_time: e.event_time,
          event_id: crypto.randomUUID(),
          org_id: e.org_id,
          event_type: "content_retrieved",
          source_role: e.source_role as string,
          content_url: e.content_url ?? null,
          content_host: e.content_url ? hostOfUrl(e.content_url) : null,
          agent_id: e.agent_id ?? null,
          session_id: e.session_id ?? null,
        }));
        await tx`INSERT INTO reference_events ${tx(rows)}`;
      }
      const expected = await takeState(tx, events);
      for (const statement of statements) await insertEvents(tx, statement);
      const actual = await takeState(tx, events);
      expect(actual.deltas.length).toBeGreaterThan(0);
      expect(actual).toEqual(expected);
      throw rolledBack;
    })
    .catch((error) => {
      if (error !== rolledBack) throw error;
    });
});
