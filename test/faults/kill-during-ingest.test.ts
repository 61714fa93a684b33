import { afterAll, expect, test } from "bun:test";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "../../src/db/client.ts";
import type { Sql } from "../../src/db/sql.ts";
import { flagMismatches, storedFlags } from "../support/first-flags.ts";
import { callApp, overHttp } from "../support/http.ts";
import { msUntil } from "../support/polling.ts";
import { testRuntime } from "../support/runtime.ts";
import { cliJson, type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { tempDir } from "../support/temp-dirs.ts";

const onServer = Boolean(process.env.TEST_DATABASE_URL);
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A client of the database the service uses: the test server, or the embedded engine it serves. */
async function databaseOf(dataDir: string | undefined): Promise<Sql> {
  if (!dataDir) return connect((await testRuntime()).db.url, 2);
  const lock = JSON.parse(await readFile(join(dataDir, "engine.lock.json"), "utf8")) as { port: number };
  return connect(`postgres://postgres@127.0.0.1:${lock.port}/postgres`, 1);
}

test(`an event acknowledged just before kill -9 is stored and counted exactly once after restart (${onServer ? "server" : "embedded"})`, async () => {
  const dataDir = onServer ? undefined : tempDir("svc-data-");
  if (dataDir) dirs.push(dataDir);
  const env = serviceEnv({
    DATABASE_URL: onServer ? (await testRuntime()).db.url : "",
    DATA_DIR: dataDir,
    RATE_LIMIT_INGEST_PER_SECOND: "0",
  });
  let service: ServiceProcess = await startService(env);
  const org = await cliJson(env, "org", "create", "--name", "Crash test agent", "--type", "agent");
  const { key } = await cliJson(env, "key", "create", "--org", org.id, "--scopes", "telemetry:write,telemetry:read");

  // Clients send until the process dies under them; what was acknowledged is recorded.
  const acknowledged = new Set<string>();
  let dead = false;
  const client = async () => {
    while (!dead) {
      const events = Array.from({ length: 20 }, () =>
        validEvents.retrieved(`crash-${crypto.randomUUID().slice(0, 6)}.example.net`, { source_role: "agent" }),
      );
      try {
        const res = await callApp(overHttp(service.base), "POST", "/events", {
          key,
          body: batch(events, { session_id: crypto.randomUUID() }),
        });
        if (res.status === 200) for (const event of events) acknowledged.add(event.id);
      } catch {
        // The connection died with the process: not acknowledged.
      }
    }
  };
  const clients = Array.from({ length: 4 }, client);
  // Killed once ten batches are acknowledged, while the four clients still send.
  expect(await msUntil(async () => acknowledged.size >= 200)).toBeLessThan(Number.POSITIVE_INFINITY);
  service.proc.kill("SIGKILL");
  await service.proc.exited;
  dead = true;
  await Promise.all(clients);
  expect(acknowledged.size).toBeGreaterThan(0);

  service = await startService(env);
  const sql = await databaseOf(dataDir);
  try {
    const stored = await storedFlags(sql, [org.id]);
    const storedIds = stored.map((event) => event.event_id);
    // Every acknowledged event is there, once; whatever else made it is counted like it.
    expect([...acknowledged].filter((id) => !storedIds.includes(id))).toEqual([]);
    expect(new Set(storedIds).size).toBe(storedIds.length);
    expect(flagMismatches(stored)).toEqual([]);
    const summary = await callApp(overHttp(service.base), "GET", "/agent/summary", { key });
    expect(summary.body).toMatchObject({
      total_events: stored.length,
      total_sessions: new Set(stored.map((event) => event.session_id)).size,
    });
  } finally {
    await sql.end({ timeout: 5 });
    await service.stop();
  }
}, 120_000);
