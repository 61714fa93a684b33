import { afterAll, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { type CallResult, callApp, overHttp } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { cliJson, type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { tempDir } from "../support/temp-dirs.ts";

/**
 * Mixed load on a real process: agents ingesting while an owner reads a year of
 * its data through every read route. No answer may be an error, every
 * acknowledged event is counted, and the per-route latencies and the process's
 * memory are printed. A few seconds in CI; FAULTS_LONG=1 runs 60 s (the figures
 * in docs/SECURITY.md come from that run on the server).
 */
const onServer = Boolean(process.env.TEST_DATABASE_URL);
const seconds = process.env.FAULTS_LONG === "1" ? 60 : 5;
let service: ServiceProcess | undefined;

afterAll(async () => {
  await service?.stop();
}, 30_000);

const statusMb = async (pid: number, field: "VmHWM" | "VmRSS") =>
  Math.round(
    Number(new RegExp(`${field}:\\s+(\\d+)`).exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024,
  );

const percentile = (sorted: number[], p: number) =>
  Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0);

test(`${seconds} s of ingest and year-long reads at once: no errors, every acknowledged event counted (${onServer ? "server" : "embedded"})`, async () => {
  const env = serviceEnv({
    DATABASE_URL: onServer ? (await testRuntime()).db.url : "",
    DATA_DIR: onServer ? undefined : tempDir("svc-mixed-"),
    RATE_LIMIT_INGEST_PER_SECOND: "0",
    RATE_LIMIT_READ_PER_SECOND: "0",
    LOG_LEVEL: "warn",
  });
  service = await startService({ ...env, LOG_LEVEL: "info" });
  const domain = `mixed-${crypto.randomUUID().slice(0, 8)}.example.com`;
  const owner = await cliJson(env, "org", "create", "--name", "Mixed load owner", "--type", "content_owner");
  await cliJson(env, "domain", "add", "--org", owner.id, "--domain", domain, "--verified");
  const ownerKey = (await cliJson(env, "key", "create", "--org", owner.id, "--scopes", "telemetry:read")).key;
  const agent = await cliJson(env, "org", "create", "--name", "Mixed load agent", "--type", "agent");
  const agentKey = (
    await cliJson(env, "key", "create", "--org", agent.id, "--scopes", "telemetry:write,telemetry:read")
  ).key;
  const remote = overHttp(service.base);

  const since = new Date(Date.now() - 365 * 86_400_000).toISOString();
  const reads = [
    ["owner summary", ownerKey, `/content-owners/summary?since=${since}`],
    ["owner urls", ownerKey, `/content-owners/urls?since=${since}`],
    ["owner timeseries", ownerKey, `/content-owners/timeseries?since=${since}&interval=day`],
    ["owner events", ownerKey, `/content-owners/events?since=${since}`],
    ["agent summary", agentKey, `/agent/summary?since=${since}`],
  ] as const;
  const latencies = new Map<string, number[]>();
  const failures: string[] = [];
  let acknowledged = 0;
  let running = true;
  const timed = async (route: string, send: () => Promise<CallResult>) => {
    const started = performance.now();
    const res = await send();
    const ms = performance.now() - started;
    if (res.status !== 200) failures.push(`${route}: ${res.status} ${JSON.stringify(res.body)}`);
    latencies.set(route, [...(latencies.get(route) ?? []), ms]);
    return res.status === 200;
  };
  const ingester = async () => {
    while (running) {
      const sessionId = crypto.randomUUID();
      const events = Array.from({ length: 50 }, (_, i) =>
        validEvents.retrieved(domain, { content_url: `https://${domain}/page-${i % 17}` }),
      );
      if (
        await timed("POST /events", () =>
          callApp(remote, "POST", "/events", { key: agentKey, body: batch(events, { session_id: sessionId }) }),
        )
      )
        acknowledged += events.length;
    }
  };
  const reader = async (offset: number) => {
    for (let i = offset; running; i++) {
      const [route, key, path] = reads[i % reads.length] ?? reads[0];
      await timed(route, () => callApp(remote, "GET", path, { key }));
    }
  };
  const stop = Bun.sleep(seconds * 1000).then(() => {
    running = false;
  });
  await Promise.all([stop, ingester(), ingester(), ingester(), reader(0), reader(2)]);

  const perRoute = Object.fromEntries(
    [...latencies].map(([route, values]) => {
      const sorted = values.sort((a, b) => a - b);
      return [route, { requests: sorted.length, p50_ms: percentile(sorted, 50), p99_ms: percentile(sorted, 99) }];
    }),
  );
  const pid = service.proc.pid;
  const memory = { rss_mb: await statusMb(pid, "VmRSS"), peak_rss_mb: await statusMb(pid, "VmHWM") };
  console.log(JSON.stringify({ engine: onServer ? "server" : "embedded", seconds, perRoute, memory, acknowledged }));

  expect(failures).toEqual([]);
  expect(acknowledged).toBeGreaterThan(0);
  // Every acknowledged event is counted by the owner's reads, exactly once.
  const summary = await callApp(remote, "GET", `/content-owners/summary?since=${since}`, { key: ownerKey });
  expect(summary.body.total_events).toBe(acknowledged);
}, 180_000);
