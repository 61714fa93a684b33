import { expect, test } from "bun:test";
import { cp, readdir } from "node:fs/promises";
import { join } from "node:path";
import { defaultMigrationsDir, migrate } from "../../src/db/migrate.ts";
import { createLogger } from "../../src/log.ts";
import { recountSessions } from "../../src/modules/ingest/service.ts";
import { scratchDatabase } from "../support/databases.ts";
import { flagMismatches, storedFlags } from "../support/first-flags.ts";
import { tempDir } from "../support/temp-dirs.ts";

const log = createLogger("error");

/** A migrations folder holding the files before `first` (or all of them). */
async function migrationsBefore(first?: string): Promise<string> {
  const dir = tempDir("migrations-");
  for (const name of await readdir(defaultMigrationsDir)) {
    if (!first || name < first) await cp(join(defaultMigrationsDir, name), join(dir, name));
  }
  return dir;
}

test("events stored before sql/030 are recounted at start: first-event flags, session bounds and domain firsts", async () => {
  const db = await scratchDatabase();
  try {
    await migrate(db.sql, log, await migrationsBefore("030"));
    const [org] = await db.sql<{ id: string }[]>`
      INSERT INTO organizations (name, org_type) VALUES ('Before 030', 'agent') RETURNING id`;
    const orgId = org?.id as string;
    const sessions = [crypto.randomUUID(), crypto.randomUUID()];
    const at = (minutes: number) => new Date(Date.UTC(2026, 2, 1) + minutes * 60_000);
    const events: [string | null, number, string, string | null][] = [
      [sessions[0] as string, 30, "https://a.news.example/1", "agent-1"],
      [sessions[0] as string, 10, "https://a.news.example/1", "agent-1"],
      [sessions[0] as string, 10, "https://b.news.example/2", "agent-2"],
      [sessions[1] as string, 5, "https://news.example/3", null],
      [null, 1, "https://news.example/3", null],
    ];
    for (const [session, minutes, url, agent] of events) {
      await db.sql`
        INSERT INTO events (event_time, event_id, org_id, event_type, source_role, content_url, content_host, agent_id, session_id)
        VALUES (${at(minutes)}, ${crypto.randomUUID()}, ${orgId}, 'content_retrieved', 'agent', ${url},
                ${new URL(url).hostname}, ${agent}, ${session})`;
    }
    await migrate(db.sql, log, await migrationsBefore());
    // What the service does at start, after migrating.
    expect(await recountSessions(db.sql)).toBe(2);

    const stored = await storedFlags(db.sql, [orgId]);
    expect(stored).toHaveLength(events.length);
    expect(flagMismatches(stored)).toEqual([]);
    expect(stored.filter((e) => e.first_in !== 0)).toHaveLength(3);
    const bounds = await db.sql<{ session_id: string; events_from: Date }[]>`
      SELECT session_id, events_from FROM session_bounds WHERE session_id = ANY (${sessions}::uuid[]) ORDER BY events_from`;
    expect([...bounds]).toEqual([
      { session_id: sessions[1] as string, events_from: at(5) },
      { session_id: sessions[0] as string, events_from: at(10) },
    ]);
    const [domains] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM session_domain_firsts WHERE session_id = ${sessions[0] as string} AND domain = 'news.example'`;
    expect(domains?.n).toBe(2);
  } finally {
    await db.close();
  }
}, 60_000);
