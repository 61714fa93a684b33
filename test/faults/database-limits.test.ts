import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "../../src/db/client.ts";
import type { Sql } from "../../src/db/sql.ts";
import { type PrivateServer, privateServerAvailable, startPrivateServer } from "../support/private-server.ts";
import { cliJson, type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { ago, batch, validEvents } from "../support/telemetry-events.ts";

/**
 * The database at its limits, on a server of the test's own: a full connection
 * table, and reads stuck behind a lock. Answers stay 2xx or a 503 with
 * Retry-After, nothing hangs, ingest keeps going, and it all recovers by itself.
 */
const maxConnections = 30;
const readTimeoutMs = 500;
let server: PrivateServer;
let service: ServiceProcess;
let env: Record<string, string | undefined>;

beforeAll(async () => {
  if (!privateServerAvailable) return;
  server = await startPrivateServer({ maxConnections });
  env = serviceEnv({
    DATABASE_URL: server.databaseUrl,
    RATE_LIMIT_INGEST_PER_SECOND: "0",
    RATE_LIMIT_READ_PER_SECOND: "0",
    READ_STATEMENT_TIMEOUT_MS: String(readTimeoutMs),
    LOG_LEVEL: "warn",
  });
  service = await startService({ ...env, LOG_LEVEL: "info" });
}, 120_000);

afterAll(async () => {
  await service?.stop("SIGKILL");
  await server?.stop();
}, 60_000);

interface Answer {
  status: number;
  retryAfter: string | null;
  code?: string;
  ms: number;
}

async function agentWithKey(name: string) {
  const org = await cliJson(env, "org", "create", "--name", name, "--type", "agent");
  const { key } = await cliJson(env, "key", "create", "--org", org.id, "--scopes", "telemetry:write,telemetry:read");
  return { orgId: org.id as string, key: key as string };
}

/** One call; a request the service never answers fails the test instead of hanging it. */
async function call(key: string, method: "GET" | "POST", path: string, body?: unknown): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(`${service.base}${path}`, {
    method,
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  const code = res.status >= 400 ? (JSON.parse(text) as { code?: string }).code : undefined;
  return { status: res.status, retryAfter: res.headers.get("retry-after"), code, ms: performance.now() - started };
}

const yearSummary = () => `/agent/summary?since=${new Date(Date.now() - 365 * 86_400_000).toISOString()}`;

/** Sends 20-event batches from `clients` loops until `until` resolves; returns each answer and what was acknowledged. */
async function ingestUntil(key: string, until: Promise<unknown>, clients = 4) {
  let running = true;
  void until.then(() => {
    running = false;
  });
  const answers: Answer[] = [];
  const acknowledged: string[] = [];
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (running) {
        const events = Array.from({ length: 20 }, () =>
          validEvents.retrieved(`limits-${crypto.randomUUID().slice(0, 6)}.example.net`, { source_role: "agent" }),
        );
        const answer = await call(key, "POST", "/events", batch(events, { session_id: crypto.randomUUID() }));
        answers.push(answer);
        if (answer.status === 200) acknowledged.push(...events.map((event) => event.id));
        else await Bun.sleep(50);
      }
    }),
  );
  return { answers, acknowledged };
}

/** Ingest (ingestUntil) and year-long reads one after another, at once, for `ms`. */
async function ingestAndRead(key: string, ms: number) {
  const window = Bun.sleep(ms);
  let reading = true;
  void window.then(() => {
    reading = false;
  });
  const reads: Answer[] = [];
  const readLoop = async () => {
    while (reading) reads.push(await call(key, "GET", yearSummary()));
  };
  const [during] = await Promise.all([ingestUntil(key, window), readLoop()]);
  return { during, reads };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);
};

async function storedOnce(orgId: string, ids: string[]): Promise<string[]> {
  const sql = connect(server.databaseUrl, 1);
  try {
    const rows = await sql<{ event_id: string; n: number }[]>`
      SELECT event_id::text, count(*)::int AS n FROM events
      WHERE org_id = ${orgId}::uuid AND event_id = ANY(${ids}::uuid[]) GROUP BY event_id`;
    const counts = new Map(rows.map((row) => [row.event_id, row.n]));
    return ids.filter((id) => counts.get(id) !== 1);
  } finally {
    await sql.end();
  }
}

test.skipIf(!privateServerAvailable)(
  "with every connection slot taken, answers are 200 or 503 with Retry-After, never a hang or a 500, and it recovers",
  async () => {
    const { orgId, key } = await agentWithKey("Full connection table");
    expect((await call(key, "GET", yearSummary())).status).toBe(200);

    // Take every slot the server has left (superuser slots included: the test connects as postgres).
    const fillers: Sql[] = [];
    for (;;) {
      const filler = connect(server.adminUrl, 1);
      try {
        await filler`SELECT 1`;
        fillers.push(filler);
      } catch (error) {
        await filler.end();
        expect(String((error as { code?: string }).code)).toBe("53300");
        break;
      }
    }
    expect(fillers.length).toBeLessThan(maxConnections);

    const { during, reads } = await ingestAndRead(key, 3000);
    const answersWhileFull = [...during.answers, ...reads];
    const count = (answers: Answer[]) =>
      Object.fromEntries(
        Object.entries(Object.groupBy(answers, (answer) => answer.status)).map(([status, of]) => [status, of?.length]),
      );
    console.log(
      JSON.stringify({ connectionsTaken: fillers.length, ingest: count(during.answers), reads: count(reads) }),
    );
    expect(answersWhileFull.filter((answer) => answer.status !== 200 && answer.status !== 503)).toEqual([]);
    expect(answersWhileFull.filter((answer) => answer.status === 503 && answer.retryAfter === null)).toEqual([]);

    await Promise.all(fillers.map((filler) => filler.end()));
    // Recovers by itself: both routes answer 200 again within seconds.
    const deadline = Date.now() + 15_000;
    let ingestBack = false;
    let readBack = false;
    const after: string[] = [];
    while ((!ingestBack || !readBack) && Date.now() < deadline) {
      const events = [validEvents.retrieved("limits-after.example.net", { source_role: "agent" })];
      const sent = await call(key, "POST", "/events", batch(events, { session_id: crypto.randomUUID() }));
      if (sent.status === 200) after.push(...events.map((event) => event.id));
      ingestBack ||= sent.status === 200;
      readBack ||= (await call(key, "GET", yearSummary())).status === 200;
      if (!ingestBack || !readBack) await Bun.sleep(200);
    }
    expect({ ingestBack, readBack }).toEqual({ ingestBack: true, readBack: true });
    expect(await storedOnce(orgId, [...during.acknowledged, ...after])).toEqual([]);
  },
  90_000,
);

test.skipIf(!privateServerAvailable)(
  "reads stuck behind a lock time out with 503 query_timeout while ingest keeps answering 200",
  async () => {
    const { orgId, key } = await agentWithKey("Slow reads");
    const old = [validEvents.retrieved("limits-old.example.net", { source_role: "agent", timestamp: ago(86_400) })];
    expect((await call(key, "POST", "/events", batch(old, { session_id: crypto.randomUUID() }))).status).toBe(200);
    // Materialise everything, so a year-long read comes from the aggregates, then hold every
    // aggregate's materialisation exclusively: that read cannot finish.
    const locker = connect(server.databaseUrl, 1);
    const views = await locker<{ view: string }[]>`
      SELECT format('%I.%I', c.user_view_schema, c.user_view_name) AS view
      FROM _timescaledb_catalog.continuous_agg c ORDER BY c.mat_hypertable_id`;
    for (const { view } of views) await locker`CALL refresh_continuous_aggregate(${view}::regclass, NULL, NULL)`;
    const materialised = await locker<{ schema_name: string; table_name: string }[]>`
      SELECT h.schema_name, h.table_name
      FROM _timescaledb_catalog.continuous_agg c
      JOIN _timescaledb_catalog.hypertable h ON h.id = c.mat_hypertable_id`;
    expect(materialised.length).toBeGreaterThan(0);
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const lock = locker.begin(async (tx) => {
      for (const { schema_name, table_name } of materialised)
        await tx`LOCK TABLE ${tx(schema_name)}.${tx(table_name)} IN ACCESS EXCLUSIVE MODE`;
      locked();
      await released;
    });
    await holding;

    const { during, reads } = await ingestAndRead(key, 3000);
    release();
    await lock;
    await locker.end();

    const ingestMs = during.answers.filter((answer) => answer.status === 200).map((answer) => answer.ms);
    console.log(
      JSON.stringify({
        reads: reads.map((read) => `${read.status} ${read.code ?? ""} ${Math.round(read.ms)} ms`),
        ingest: { requests: during.answers.length, p50_ms: percentile(ingestMs, 50), p99_ms: percentile(ingestMs, 99) },
      }),
    );
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.filter((read) => read.status !== 503 || read.code !== "query_timeout" || !read.retryAfter)).toEqual(
      [],
    );
    expect(during.answers.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(await storedOnce(orgId, during.acknowledged)).toEqual([]);
    // With the lock gone, the same read answers again.
    expect((await call(key, "GET", yearSummary())).status).toBe(200);
  },
  90_000,
);
