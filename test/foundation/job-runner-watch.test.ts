import { afterAll, expect, test } from "bun:test";
import { migrate } from "../../src/db/migrate.ts";
import { warnUnlessJobsRun } from "../../src/jobs/runner-watch.ts";
import { scratchDatabase } from "../support/databases.ts";
import { recordingLogger } from "../support/logs.ts";

// A database of its own: other tests' instances claim ticks on the shared one.
const db = await scratchDatabase();
afterAll(() => db.close());

test("an instance without the jobs role warns while no instance claims job ticks, and stops once one does", async () => {
  // Migrations log on their own (a retry after meeting a TimescaleDB job is a warning): not what is checked here.
  await migrate(db.sql, recordingLogger());
  const log = recordingLogger();
  expect(await warnUnlessJobsRun({ sql: db.sql, log }, "ingest,api")).toBe(false);
  expect(log.lines.filter((line) => line.level === "warn").map((line) => line.msg)).toEqual([
    "no instance has run a scheduled job in the last 15 minutes: this one does not (SERVICE_ROLES=ingest,api); run at least one instance with the jobs role (or all)",
  ]);

  await db.sql`INSERT INTO job_ticks (job, tick, instance) VALUES ('sign-in-purge', now(), 'jobs-1')`;
  const quiet = recordingLogger();
  expect(await warnUnlessJobsRun({ sql: db.sql, log: quiet }, "ingest,api")).toBe(true);
  expect(quiet.lines.filter((line) => line.level === "warn")).toEqual([]);
}, 60_000);
