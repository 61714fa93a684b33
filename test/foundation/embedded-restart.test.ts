import { expect, test } from "bun:test";
import { rm } from "node:fs/promises";
import { openDatabase } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createLogger } from "../../src/log.ts";
import { tempDir } from "../support/temp-dirs.ts";

const log = createLogger("error");

test("the embedded engine restarted on its data directory still runs TimescaleDB's licensed functions", async () => {
  const dataDir = tempDir("restart-");
  const settings = { DATA_DIR: dataDir, DATABASE_POOL_SIZE: 1, DATABASE_URL: undefined };
  try {
    const first = await openDatabase(settings, log);
    await migrate(first.sql, log);
    await first.close();

    const again = await openDatabase(settings, log);
    try {
      // Both need the TSL half of TimescaleDB, which a restart used to leave unloaded.
      await again.sql`CALL refresh_continuous_aggregate('events_by_host_hour', NULL, NULL)`;
      const [policy] = await again.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM timescaledb_information.jobs WHERE proc_name = 'policy_compression'`;
      // The events' (sql/003) and the four hour-level rollups' (sql/069).
      expect(policy?.n).toBe(5);
      const [compressed] = await again.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM (SELECT compress_chunk(c, true) FROM show_chunks('events') c) AS done`;
      expect(compressed?.n).toBe(0);
    } finally {
      await again.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}, 60_000);
