import type { Sql } from "../../src/db/sql.ts";

/**
 * Runs `work` while the database refuses `event` (e.g. "INSERT", "UPDATE OF
 * fetched_at") on `table` for the rows `when` selects, as a database refusing a
 * write would; the trigger is gone afterwards. `when` is SQL of the test's own,
 * never input.
 */
export async function whileRefusing(
  sql: Sql,
  refused: { event: string; table: string; when: string },
  work: () => Promise<unknown>,
): Promise<void> {
  const trigger = `refuse_${crypto.randomUUID().replaceAll("-", "")}`;
  await sql.unsafe(`
    CREATE FUNCTION ${trigger}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
    CREATE TRIGGER ${trigger} BEFORE ${refused.event} ON ${refused.table}
    FOR EACH ROW WHEN (${refused.when}) EXECUTE FUNCTION ${trigger}()`);
  try {
    await work();
  } finally {
    await sql.unsafe(`DROP TRIGGER ${trigger} ON ${refused.table}; DROP FUNCTION ${trigger}()`);
  }
}
