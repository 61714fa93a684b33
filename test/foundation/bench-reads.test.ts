import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { connect } from "../../src/db/client.ts";
import { createServerDatabase, testServerUrl } from "../support/databases.ts";

/**
 * bench:reads pauses the database's refresh and compression policies while it
 * loads a year of events (README, Reads, Benchmark). Interrupted, it must not
 * leave them paused, nor let a later --reuse time the part it loaded as the
 * whole. On a TimescaleDB server only: the embedded engine it runs in memory is
 * gone with it.
 */
const scratch = testServerUrl ? await createServerDatabase(testServerUrl) : undefined;
afterAll(() => scratch?.drop(), 30_000);

const bench = (url: string, ...args: string[]) =>
  Bun.spawn(["bun", join(import.meta.dir, "../../bench/reads.ts"), "--runs", "1", "--raw-runs", "1", ...args], {
    env: { ...process.env, DATABASE_URL: url },
    stdout: "pipe",
    stderr: "pipe",
  });

describe.skipIf(!scratch)("bench:reads interrupted", () => {
  test("Ctrl-C during the load schedules the policies again, and --reuse refuses the incomplete data set", async () => {
    const url = (scratch as NonNullable<typeof scratch>).url;
    const sql = connect(url, 1);
    try {
      const loading = bench(url, "--events", "5000000");
      let stored = 0;
      for (let waited = 0; stored === 0 && waited < 120_000; waited += 250) {
        await Bun.sleep(250);
        stored = await sql`SELECT count(*)::int AS n FROM events`.then(([row]) => row?.n ?? 0).catch(() => 0);
      }
      expect(stored).toBeGreaterThan(0);
      loading.kill("SIGINT");
      expect(await loading.exited).toBe(130);
      // After the load's progress lines: the last says what was put back.
      expect((await new Response(loading.stderr).text()).trim().split("\n").at(-1)).toBe(
        "interrupted: the refresh and compression policies are scheduled again",
      );
      const paused = await sql`
        SELECT count(*)::int AS n FROM timescaledb_information.jobs
        WHERE proc_name IN ('policy_refresh_continuous_aggregate', 'policy_compression') AND NOT scheduled`;
      expect(paused[0]?.n).toBe(0);

      const reused = bench(url, "--events", "5000000", "--reuse", "--skip-export");
      expect(await reused.exited).toBe(1);
      expect(await new Response(reused.stdout).text()).toBe("");
      expect((await new Response(reused.stderr).text()).trim()).toMatch(
        /^--reuse: the database holds \d+ events, fewer than --events 5000000 \(an interrupted load\?\); load them into an empty database$/,
      );
    } finally {
      await sql.end({ timeout: 5 });
    }
  }, 240_000);
});
