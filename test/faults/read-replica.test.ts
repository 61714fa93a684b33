import { afterAll, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import type { Sql } from "../../src/db/sql.ts";
import { callApp, overHttp } from "../support/http.ts";
import { type PrivateServer, privateServerAvailable, startPrivateServer } from "../support/private-server.ts";
import { cliJson, type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

/**
 * Reads on a real streaming replica (../shared/tsdb/start-replica.sh). Pausing the
 * replica's WAL replay makes it fall behind on demand: an event acknowledged then
 * is missing from a read served by the replica, and that read's as_of is earlier
 * than the event's acknowledgement; a read served by the primary counts it.
 */
const maxLagSeconds = 2;
let server: PrivateServer | undefined;
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop("SIGKILL");
  await server?.stop();
}, 60_000);

test.skipIf(!privateServerAvailable)(
  "reads go to a replica that keeps up, to the primary when it falls behind or stops, and back when it returns",
  async () => {
    server = await startPrivateServer();
    const replica = await server.startReplica();
    const env = serviceEnv({
      DATABASE_URL: server.databaseUrl,
      READ_REPLICA_URLS: replica.databaseUrl,
      REPLICA_MAX_LAG_SECONDS: String(maxLagSeconds),
      RATE_LIMIT_READ_PER_SECOND: "0",
      LOG_LEVEL: "info",
    });
    service = await startService(env);
    const org = await cliJson(env, "org", "create", "--name", "Replica reader", "--type", "agent");
    const { key } = await cliJson(env, "key", "create", "--org", org.id, "--scopes", "telemetry:write,telemetry:read");
    const http = overHttp(service.base, 15_000);
    const since = new Date(Date.now() - 86_400_000).toISOString();

    let sent = 0;
    /** Ingests one event; resolves with the time just after it was acknowledged. */
    const ingestOne = async () => {
      const events = [validEvents.retrieved("replica.example.net")];
      const res = await callApp(http, "POST", "/events", { key, body: batch(events) });
      expect(res.status).toBe(200);
      sent++;
      return new Date();
    };
    const read = async () => {
      const res = await callApp(http, "GET", `/agent/summary?since=${since}`, { key });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-data-as-of")).toBe(res.body.as_of);
      return { total: res.body.total_events as number, asOf: new Date(res.body.as_of) };
    };
    /** Polls until `check` holds, for at most `ms`; the answer it held on. */
    const until = async <T>(get: () => Promise<T>, check: (value: T) => boolean, ms = 15_000) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const value = await get();
        if (check(value) || Date.now() > deadline) return value;
        await Bun.sleep(100);
      }
    };
    /** Stops replay on the standby, and waits until it has stopped (a pause is first only requested). */
    const pauseReplay = async (standby: Sql) => {
      await standby`SELECT pg_wal_replay_pause()`;
      await until(
        async () => (await standby<{ state: string }[]>`SELECT pg_get_wal_replay_pause_state() AS state`)[0]?.state,
        (state) => state === "paused",
      );
    };
    const standby = connect(replica.adminUrl, 1);
    const pause = () => pauseReplay(standby);
    const resume = () => standby`SELECT pg_wal_replay_resume()`;
    /** True when a read is served by the replica: paused, an event acknowledged then is missing, and as_of says so. */
    const servedByReplica = async () => {
      await until(read, (answer) => answer.total === sent);
      await pause();
      const acknowledgedAt = await ingestOne();
      const answer = await read();
      await resume();
      return answer.total === sent - 1 && answer.asOf < acknowledgedAt;
    };
    try {
      await ingestOne();
      // Routing: the replica serves reads while it keeps up.
      expect(await servedByReplica()).toBe(true);

      // Lag: paused past REPLICA_MAX_LAG_SECONDS, reads move to the primary and count everything.
      await pause();
      const acknowledgedAt = await ingestOne();
      const fromPrimary = await until(read, (answer) => answer.total === sent, (maxLagSeconds + 5) * 1000);
      expect(fromPrimary.total).toBe(sent);
      expect(fromPrimary.asOf >= acknowledgedAt).toBe(true);
      await resume();
      // Back once it has caught up.
      expect(await until(servedByReplica, Boolean)).toBe(true);

      // Stopped mid-test: every read still answers, from the primary, with everything.
      await standby.end();
      await replica.stop("immediate");
      for (let i = 0; i < 5; i++) {
        await ingestOne();
        expect((await read()).total).toBe(sent);
      }
      // Back when it returns.
      await replica.start();
      const again = connect(replica.adminUrl, 1);
      try {
        const pausedRead = async () => {
          await until(read, (answer) => answer.total === sent);
          await pauseReplay(again);
          const at = await ingestOne();
          const answer = await read();
          await again`SELECT pg_wal_replay_resume()`;
          return answer.total === sent - 1 && answer.asOf < at;
        };
        expect(await until(pausedRead, Boolean)).toBe(true);
      } finally {
        await again.end();
      }
      const lines = service.logs.filter((line) => String(line.msg).startsWith("read replica"));
      expect(lines.map((line) => line.msg)).toContain("read replica failed: read again on the primary");
      expect(lines.map((line) => line.msg)).toContain("read replica back in use");
    } finally {
      await standby.end().catch(() => {});
    }
  },
  120_000,
);
