/**
 * Insert-path benchmark: what one write of ingest's size costs per row in
 * PostgreSQL, by the ways the events could be written, in the same run:
 *
 *   DATABASE_URL=… bun run bench:insert-paths [--rows 1600] [--rounds 12]
 *
 * Each round writes `rows` new events of the realistic shape (bench/event-generator.ts)
 * in one transaction, for each path in turn: unnest with ON CONFLICT DO NOTHING and RETURNING
 * (what the event store does, without the counting beside it), unnest without
 * them, a dedupe pre-check followed by plain unnest, and COPY FROM STDIN. Prints
 * the median µs per row over the rounds (after two warm-up rounds of every path),
 * this process's CPU per row in its writes (building and sending the statement,
 * reading the answer: the client's share, which the service pays for each write)
 * and, when the server runs on this machine, the database's CPU per row over those
 * rounds (its backends read in /proc). Then, for scale, one COPY of as many rows as all the
 * rounds wrote, in one statement: what bench:ingest's "plain COPY" does. Needs a
 * TimescaleDB server (the embedded engine cannot take COPY FROM STDIN); the
 * bench creates a database of its own there and drops it afterwards.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { progressLine } from "../src/cli/progress.ts";
import { loadConfig } from "../src/config.ts";
import type { Queryable } from "../src/db/sql.ts";
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
import { failInOneLine, numberOption } from "./cli.ts";
import { emitter } from "./event-generator.ts";
import { csvLine, eventRow } from "./event-rows.ts";
import { backendCpuMs, cpuMsOf } from "./process-cpu.ts";

failInOneLine();
const { values } = parseArgs({
  options: { rows: { type: "string", default: "1600" }, rounds: { type: "string", default: "12" } },
});
const rowCount = numberOption(values, "rows", 1);
const rounds = numberOption(values, "rounds", 1);
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
  "COPY FROM STDIN": (rows) => sql.begin((tx) => copyRows(tx, rows)),
};

async function copyRows(tx: Queryable, rows: EventRow[]): Promise<void> {
  const columns = storedEventColumns.map((column) => column.name).join(", ");
  const writable = await tx.unsafe(`COPY events (${columns}) FROM STDIN WITH (FORMAT csv)`).writable();
  await pipeline(Readable.from(rows.map(csvLine)), writable);
}

/**
 * The CPU the database's backends have used, in ms: the pool's connections, as
 * the warm-up rounds opened them (read once, so that no query of the bench's own
 * counts); undefined when the server is not on this machine.
 */
let backendPids: number[] | undefined;
async function databaseCpuMs(): Promise<number | undefined> {
  if (!backendPids) return undefined;
  let used = 0;
  for (const pid of backendPids) used += (await cpuMsOf(pid)) ?? 0;
  return used;
}

// Warm-up: two rounds of every path, which also open the connections whose CPU is read.
for (let round = 0; round < 2; round++) for (const write of Object.values(paths)) await write(rowsOf());
const backends = await backendCpuMs(sql);
backendPids = backends && [...backends.keys()];

// Each path's rounds in a row, so that its database CPU is read once, over all of
// them (/proc counts in 10 ms steps, more than one write of a few hundred rows).
const progress = progressLine();
const perRow: Record<string, number[]> = {};
const cpuMs: Record<string, number> = {};
const clientUs: Record<string, number> = {};
for (const [name, write] of Object.entries(paths)) {
  const times: number[] = [];
  let clientUsed = 0;
  const cpuBefore = await databaseCpuMs();
  for (let round = 0; round < rounds; round++) {
    progress.show(`${name}: round ${round + 1} of ${rounds}`);
    const rows = rowsOf();
    const clientBefore = process.cpuUsage();
    const started = performance.now();
    await write(rows);
    times.push(((performance.now() - started) * 1000) / rows.length);
    const client = process.cpuUsage(clientBefore);
    clientUsed += client.user + client.system;
  }
  perRow[name] = times;
  cpuMs[name] = ((await databaseCpuMs()) ?? 0) - (cpuBefore ?? 0);
  clientUs[name] = clientUsed;
}
progress.clear();
const bulkRows = rowCount * rounds;
const bulk = Array.from({ length: rounds }, rowsOf).flat();
const bulkCpuBefore = await databaseCpuMs();
const bulkClientBefore = process.cpuUsage();
const bulkStarted = performance.now();
await sql.begin((tx) => copyRows(tx, bulk));
const bulkUs = ((performance.now() - bulkStarted) * 1000) / bulkRows;
const bulkClient = process.cpuUsage(bulkClientBefore);
const bulkCpu = ((await databaseCpuMs()) ?? 0) - (bulkCpuBefore ?? 0);

const cpuCell = (used: number, rowsWritten: number) =>
  backendPids ? ((used * 1000) / rowsWritten).toFixed(1) : "not on this machine";
console.log(
  `${rowCount} rows per transaction, ${rounds} rounds per path after 2 warm-up rounds of each: ` +
    "µs per row is the median round's, CPU the mean over all rounds",
);
// /proc counts CPU in 10 ms steps: over a path's rounds, that is this much a row.
if (backendPids) console.log(`database CPU read in steps of ${(10_000 / (rowCount * rounds)).toFixed(1)} µs a row`);
console.log("");
console.log("| write path | µs per row | client CPU, µs per row | database CPU, µs per row |");
console.log("|---|---:|---:|---:|");
for (const [name, times] of Object.entries(perRow)) {
  times.sort((a, b) => a - b);
  const median = (times[Math.floor(times.length / 2)] as number).toFixed(1);
  const client = ((clientUs[name] ?? 0) / (rowCount * rounds)).toFixed(1);
  console.log(`| ${name} | ${median} | ${client} | ${cpuCell(cpuMs[name] ?? 0, rowCount * rounds)} |`);
}
const bulkClientPerRow = ((bulkClient.user + bulkClient.system) / bulkRows).toFixed(1);
console.log(
  `| COPY FROM STDIN, ${bulkRows} rows in one statement | ${bulkUs.toFixed(1)} | ${bulkClientPerRow} | ${cpuCell(bulkCpu, bulkRows)} |`,
);
await db.close();
await scratch.drop();
