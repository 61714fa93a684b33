/**
 * Insert-path benchmark: what one write of ingest's size costs per row in
 * PostgreSQL, by the ways the events could be written, in the same run:
 *
 *   DATABASE_URL=… bun run bench:insert-paths [--rows 1600] [--rounds 12]
 *
 * Each round writes `rows` new events of the realistic shape (bench/event-generator.ts)
 * in one transaction per path: unnest with ON CONFLICT DO NOTHING and RETURNING
 * (what the event store does, without the counting beside it), unnest without
 * them, a dedupe pre-check followed by plain unnest, and COPY FROM STDIN. Prints
 * the median µs per row over the rounds after two warm-up rounds. Needs a
 * TimescaleDB server (the embedded engine cannot take COPY FROM STDIN); the
 * bench creates a database of its own there and drops it afterwards.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/log.ts";
import {
  type EventRow,
  selectStoredColumns,
  storedColumnList,
  storedEventColumns,
  unnestEvents,
} from "../src/modules/ingest/event-columns.ts";
import { createOrganization } from "../src/modules/organizations/service.ts";
import { startRuntime } from "../src/runtime.ts";
import { createServerDatabase } from "../test/support/databases.ts";
import { emitter } from "./event-generator.ts";
import { csvLine, eventRow } from "./event-rows.ts";

const { values } = parseArgs({
  options: { rows: { type: "string", default: "1600" }, rounds: { type: "string", default: "12" } },
});
const rowCount = Number(values.rows);
const rounds = Number(values.rounds);
if (!process.env.DATABASE_URL) {
  console.error("bench:insert-paths needs DATABASE_URL (a TimescaleDB server)");
  process.exit(2);
}

const scratch = await createServerDatabase(process.env.DATABASE_URL);
const config = loadConfig({ ...process.env, DATABASE_URL: scratch.url, LOG_LEVEL: "error" });
const { ctx, db } = await startRuntime(config, createLogger("error"));
const sql = ctx.sql;
const org = await createOrganization(sql, { name: "Insert paths", orgType: "platform" });
const next = emitter("realistic", rowCount);

const rowsOf = (): EventRow[] => next().map((event) => eventRow(event, org.id));
const timeText = (row: EventRow) => (typeof row.eventTime === "string" ? row.eventTime : row.eventTime.toISOString());

const paths: Record<string, (rows: EventRow[]) => Promise<unknown>> = {
  "unnest, ON CONFLICT DO NOTHING, RETURNING": (rows) =>
    sql.begin(
      (tx) => tx`
        INSERT INTO events (${storedColumnList(tx)}) SELECT ${selectStoredColumns(tx, "n")} FROM ${unnestEvents(tx, rows, "n")}
        ON CONFLICT DO NOTHING RETURNING org_id, event_id`,
    ),
  "unnest, plain": (rows) =>
    sql.begin(
      (tx) => tx`
        INSERT INTO events (${storedColumnList(tx)}) SELECT ${selectStoredColumns(tx, "n")} FROM ${unnestEvents(tx, rows, "n")}`,
    ),
  "dedupe pre-check, then unnest, plain": (rows) =>
    sql.begin(async (tx) => {
      await tx`
        SELECT e.event_id FROM events e
        JOIN unnest(${rows.map((r) => r.orgId)}::uuid[], ${rows.map((r) => r.eventId)}::uuid[],
                    ${rows.map(timeText)}::timestamptz[]) AS k (org_id, event_id, event_time)
          ON e.org_id = k.org_id AND e.event_id = k.event_id AND e.event_time = k.event_time`;
      return tx`
        INSERT INTO events (${storedColumnList(tx)}) SELECT ${selectStoredColumns(tx, "n")} FROM ${unnestEvents(tx, rows, "n")}`;
    }),
  "COPY FROM STDIN": (rows) =>
    sql.begin(async (tx) => {
      const columns = storedEventColumns.map((column) => column.name).join(", ");
      const writable = await tx.unsafe(`COPY events (${columns}) FROM STDIN WITH (FORMAT csv)`).writable();
      const lines = rows.map(csvLine);
      await pipeline(Readable.from(lines), writable);
    }),
};

const perRow: Record<string, number[]> = Object.fromEntries(Object.keys(paths).map((name) => [name, []]));
for (let round = 0; round < rounds + 2; round++) {
  process.stderr.write(`\rround ${round + 1} of ${rounds + 2}`);
  for (const [name, write] of Object.entries(paths)) {
    const rows = rowsOf();
    const started = performance.now();
    await write(rows);
    if (round >= 2) perRow[name]?.push(((performance.now() - started) * 1000) / rows.length);
  }
}
process.stderr.write("\n");
console.log(`${rowCount} rows per transaction, median of ${rounds} rounds after 2 warm-up rounds\n`);
console.log("| write path | µs per row |");
console.log("|---|---:|");
for (const [name, times] of Object.entries(perRow)) {
  times.sort((a, b) => a - b);
  console.log(`| ${name} | ${(times[Math.floor(times.length / 2)] as number).toFixed(1)} |`);
}
await db.close();
await scratch.drop();
