/**
 * Webhook delivery benchmark:
 *
 *   bun run bench:webhooks [--deliveries 10000] [--endpoints 100] [--hanging 0.1] [--concurrency 32]
 *
 * Against a TimescaleDB server when DATABASE_URL is set (the bench creates a
 * database of its own there and drops it afterwards), otherwise the embedded
 * engine in a temporary DATA_DIR. The service runs as its own process
 * (`bun src/main.ts` with the start script's settings, bench/start-script.ts;
 * sweeping every second), the receiver as another
 * (bench/webhook-receiver.ts: HTTPS, a self-signed certificate made with openssl
 * and trusted through WEBHOOK_CA_FILE, localhost allowed with WEBHOOK_ALLOW_LOOPBACK).
 *
 * Endpoints are spread over organisations of 10 (the per-organisation limit); a
 * fraction of them (`--hanging`) never answer, so each of their attempts runs
 * into the 10 s window. The backlog is recorded as outbox events in one
 * statement (events × subscribed endpoints = deliveries), and the clock starts.
 * Progress is shown on stderr: every second on a terminal, every 10 s into a file. The drain ends when every delivery to an
 * answering endpoint has been delivered; then the bench waits for the hanging
 * endpoints' attempts to be recorded and checks the books: nothing received
 * twice, every delivered id received, every delivery accounted for.
 */
import { writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { progressLine } from "../src/cli/progress.ts";
import { connect } from "../src/db/client.ts";
import type { Sql } from "../src/db/sql.ts";
import { createApiKey } from "../src/modules/keys/service.ts";
import { createOrganization } from "../src/modules/organizations/service.ts";
import { createServerDatabase } from "../test/support/databases.ts";
import { testCertificate } from "../test/support/webhooks.ts";
import { failInOneLine, finish, numberOption, refuseOption, stopOnExit, undoOnExit } from "./cli.ts";
import { freePort } from "./free-port.ts";
import { startScriptEnv } from "./start-script.ts";

failInOneLine();
const { values: flags } = parseArgs({
  options: {
    deliveries: { type: "string", default: "10000" },
    endpoints: { type: "string", default: "100" },
    hanging: { type: "string", default: "0.1" },
    concurrency: { type: "string", default: "32" },
  },
});
const endpointCount = numberOption(flags, "endpoints", 10);
const perOrg = 10;
const eventsPerOrg = Math.ceil(numberOption(flags, "deliveries", 1) / endpointCount);
const hangingCount = Math.round(endpointCount * numberOption(flags, "hanging", 0, 1, true));
if (endpointCount % perOrg !== 0) refuseOption(`--endpoints must be a multiple of ${perOrg}, not ${endpointCount}`);
const totalDeliveries = eventsPerOrg * endpointCount;
const root = join(import.meta.dir, "..");

const work = await mkdtemp(join(tmpdir(), "webhook-bench-"));
undoOnExit(() => rm(work, { recursive: true, force: true }));

// ---------------------------------------------------------------------------
// A certificate, the receiver, the database and the service

// The tests' certificate (openssl, localhost); the receiver reads its key from a file.
const { certFile, key } = testCertificate();
const keyFile = join(work, "key.pem");
writeFileSync(keyFile, key);

const receiver = Bun.spawn([process.execPath, join(import.meta.dir, "webhook-receiver.ts")], {
  env: { ...process.env, CERT_FILE: certFile, KEY_FILE: keyFile },
  stdout: "pipe",
  stderr: "inherit",
});
stopOnExit(receiver);
const firstLine = async (stream: ReadableStream<Uint8Array>) => {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.split("\n")[0] as string;
};
const ports = JSON.parse(await firstLine(receiver.stdout)) as { https_port: number; stats_port: number };
interface ReceiverStats {
  received: number;
  unique: number;
  duplicates: number;
  hanging: number;
}
const receiverStats = async (): Promise<ReceiverStats> =>
  (await fetch(`http://127.0.0.1:${ports.stats_port}/`)).json() as Promise<ReceiverStats>;

const serverUrl = process.env.DATABASE_URL || undefined;
const scratch = serverUrl ? await createServerDatabase(serverUrl) : undefined;
if (scratch) undoOnExit(() => scratch.drop());
const dataDir = join(work, "data");

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const service = Bun.spawn([process.execPath, "src/main.ts"], {
  cwd: root,
  env: {
    ...process.env,
    ...startScriptEnv(),
    DATABASE_URL: scratch?.url ?? "",
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "error",
    RATE_LIMIT_CONTROL_PER_SECOND: "0",
    WEBHOOK_SECRET_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64"),
    WEBHOOK_ALLOW_LOOPBACK: "true",
    WEBHOOK_CA_FILE: certFile,
    WEBHOOK_SWEEP_CRON: "* * * * * *",
    WEBHOOK_CONCURRENCY: flags.concurrency,
  },
  // The service's log lines on stderr (fd 2): stdout is the report alone.
  stdout: 2,
  stderr: "inherit",
});
stopOnExit(service);
for (let waited = 0; ; waited += 100) {
  const up = await fetch(`${base}/ready`)
    .then((res) => res.ok)
    .catch(() => false);
  if (up) break;
  if (waited > 120_000 || service.exitCode !== null) {
    console.error("the service did not start");
    await finish(1);
  }
  await Bun.sleep(100);
}

/** A client of the service's database: the scratch server database, or the embedded engine the service serves. */
async function databaseClient(): Promise<Sql> {
  if (scratch) return connect(scratch.url, 2);
  const lock = JSON.parse(await readFile(join(dataDir, "engine.lock.json"), "utf8")) as { port: number };
  return connect(`postgres://postgres@127.0.0.1:${lock.port}/postgres`, 1);
}
const sql = await databaseClient();
undoOnExit(() => sql.end({ timeout: 5 }));

async function rssMb(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

// ---------------------------------------------------------------------------
// Organisations and endpoints, through the API

console.log(
  `engine: ${scratch ? "TimescaleDB server" : "embedded"} · ${totalDeliveries.toLocaleString()} deliveries to ${endpointCount} endpoints (${hangingCount} never answer) · WEBHOOK_CONCURRENCY ${flags.concurrency}`,
);
const orgs: string[] = [];
const hangingIds = new Set<string>();
for (let o = 0; o < endpointCount / perOrg; o++) {
  const org = await createOrganization(sql, { name: `Webhook bench ${o}`, orgType: "platform" });
  const { key } = await createApiKey(sql, { orgId: org.id, scopes: ["identity:read", "identity:write"] });
  orgs.push(org.id);
  for (let e = 0; e < perOrg; e++) {
    const n = o * perOrg + e;
    // The hanging endpoints are spread over the organisations.
    const hangs = n % Math.round(endpointCount / Math.max(hangingCount, 1)) === 0 && hangingIds.size < hangingCount;
    const response = await fetch(`${base}/api/v1/identity/webhooks`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key },
      body: JSON.stringify({
        url: `https://localhost:${ports.https_port}/${hangs ? "hang" : "ok"}/${n}`,
        event_types: ["invite.claimed"],
      }),
    });
    const created = (await response.json()) as { id: string; detail?: string };
    if (response.status !== 201) throw new Error(`endpoint create answered ${response.status}: ${created.detail}`);
    if (hangs) hangingIds.add(created.id);
  }
}
const answeringDeliveries = eventsPerOrg * (endpointCount - hangingIds.size);

// ---------------------------------------------------------------------------
// The backlog, and the drain

const started = performance.now();
await sql`
  INSERT INTO event_outbox (org_id, event_type, data)
  SELECT org_id, 'invite.claimed', jsonb_build_object('bench', n)
  FROM unnest(${orgs}::uuid[]) AS org_id, generate_series(1, ${eventsPerOrg}) AS n`;
const recordedAt = performance.now();
console.log(`backlog recorded: ${orgs.length * eventsPerOrg} events in ${(recordedAt - started).toFixed(0)} ms`);

let peakRss = 0;
const progress = progressLine();
let last = 0;
let drainedAt = 0;
for (;;) {
  await Bun.sleep(1000);
  const stats = await receiverStats();
  const { rss } = await rssMb(service.pid);
  peakRss = Math.max(peakRss, rss);
  const elapsed = (performance.now() - started) / 1000;
  progress.show(
    `${elapsed.toFixed(0)} s: received ${stats.unique.toLocaleString()} / ${answeringDeliveries.toLocaleString()} (+${stats.unique - last} a second), hanging requests ${stats.hanging}, service RSS ${rss.toFixed(0)} MB`,
  );
  last = stats.unique;
  if (stats.unique >= answeringDeliveries) {
    drainedAt = performance.now();
    progress.clear();
    break;
  }
  if (elapsed > 900 || service.exitCode !== null) {
    progress.clear();
    console.error("the drain did not finish within 15 minutes");
    await finish(1);
  }
}

// The hanging endpoints' attempts end with the 10 s window; wait until none is in flight.
for (let waited = 0; waited < 60_000; waited += 500) {
  const [row] = await sql<{ leased: number }[]>`
    SELECT count(*)::int AS leased FROM webhook_deliveries WHERE leased_until IS NOT NULL`;
  if (row?.leased === 0) break;
  await Bun.sleep(500);
}

// ---------------------------------------------------------------------------
// The books

const stats = await receiverStats();
const receivedIds = new Set((await (await fetch(`http://127.0.0.1:${ports.stats_port}/ids`)).json()) as string[]);
const rows = await sql<{ id: string; endpoint_id: string; status: string; attempt_count: number }[]>`
  SELECT d.id, d.endpoint_id, d.status, d.attempt_count FROM webhook_deliveries d
  JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.org_id = ANY (${orgs}::uuid[])`;
const [attempts] = await sql<{ failed: number; timeouts: number }[]>`
  SELECT count(*) FILTER (WHERE NOT a.succeeded)::int AS failed,
         count(*) FILTER (WHERE a.error LIKE 'no answer within%')::int AS timeouts
  FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
  JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.org_id = ANY (${orgs}::uuid[])`;
const delivered = rows.filter((r) => r.status === "delivered");
const toHanging = rows.filter((r) => hangingIds.has(r.endpoint_id));
const missing = delivered.filter((r) => !receivedIds.has(r.id)).length;
const strayReceived = [...receivedIds].filter((id) => !delivered.some((r) => r.id === id)).length;
const drainSeconds = (drainedAt - started) / 1000;
const { peak } = await rssMb(service.pid);

console.log(`
deliveries in the database:        ${rows.length.toLocaleString()} (expected ${totalDeliveries.toLocaleString()})
delivered (2xx):                   ${delivered.length.toLocaleString()} (expected ${answeringDeliveries.toLocaleString()})
to hanging endpoints, still due:   ${toHanging.filter((r) => r.status === "pending").length.toLocaleString()} of ${toHanging.length.toLocaleString()} (${toHanging.filter((r) => r.attempt_count > 0).length} tried once and timed out, the rest held while their endpoint is paused)
failed attempts / of them timeouts: ${attempts?.failed} / ${attempts?.timeouts}
received by the receiver:          ${stats.received.toLocaleString()} requests, ${stats.unique.toLocaleString()} distinct delivery ids, ${stats.duplicates} duplicates
delivered but never received:      ${missing}
received but not marked delivered: ${strayReceived}

drain: ${answeringDeliveries.toLocaleString()} deliveries in ${drainSeconds.toFixed(1)} s = ${(answeringDeliveries / drainSeconds).toFixed(0)} deliveries/s
service RSS during the drain: peak ${peakRss.toFixed(0)} MB (sampled each second), VmHWM ${peak.toFixed(0)} MB`);

const ok =
  rows.length === totalDeliveries &&
  delivered.length === answeringDeliveries &&
  stats.duplicates === 0 &&
  missing === 0 &&
  strayReceived === 0 &&
  toHanging.every((r) => r.status === "pending");
console.log(ok ? "\nbooks balance: none lost, none twice" : "\nBOOKS DO NOT BALANCE");
await finish(ok ? 0 : 1);
