import { expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { ConfigError, loadConfig, serviceRoles } from "../../src/config.ts";
import { createTestOrg, uniqueDomain } from "../support/fixtures.ts";
import { callApp } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { runUntilExit, serviceEnv } from "../support/service-process.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";

/** The app as an instance with these SERVICE_ROLES builds it, on the test database. */
async function instanceServing(roles: string, extra: Record<string, string> = {}) {
  const { ctx } = await testRuntime();
  return createApp({ ...ctx, config: { ...ctx.config, SERVICE_ROLES: roles, ...extra } });
}

const year = () => `since=${new Date(Date.now() - 365 * 86_400_000).toISOString()}`;

test("SERVICE_ROLES is all, or a list of ingest, api and jobs; anything else names the allowed roles", () => {
  expect([...serviceRoles("all")]).toEqual(["ingest", "api", "jobs"]);
  expect([...serviceRoles("ingest, jobs")]).toEqual(["ingest", "jobs"]);
  expect(() => loadConfig({ SERVICE_ROLES: "ingest,reads" })).toThrow(
    'Invalid configuration: SERVICE_ROLES "ingest,reads" names unknown role "reads"; use all, or a comma-separated list of ingest, api, jobs',
  );
  expect(() => loadConfig({ SERVICE_ROLES: "," })).toThrow(ConfigError);
});

test("read replicas need a server, and a bad replica URL is named by position, never printed", () => {
  expect(() => loadConfig({ READ_REPLICA_URLS: "postgres://replica:5432/app" })).toThrow(
    "READ_REPLICA_URLS needs DATABASE_URL",
  );
  const secret = "mysql://user:hunter2@db/app";
  let message = "";
  try {
    loadConfig({ DATABASE_URL: "postgres://primary/app", READ_REPLICA_URLS: `postgres://r1/app, ${secret}` });
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toBe("Invalid configuration: READ_REPLICA_URLS entry 2 is not a postgres:// URL");
});

test("an ingest instance serves ingest and health, and answers 404 for reads, the control plane and the docs", async () => {
  const app = await instanceServing("ingest");
  const agent = await createTestOrg({ type: "agent" });
  const events = [validEvents.retrieved(uniqueDomain())];
  expect((await callApp(app, "POST", "/events", { key: agent.key, body: batch(events) })).status).toBe(200);
  expect((await callApp(app, "GET", "/health")).status).toBe(200);
  expect((await callApp(app, "GET", "/ready")).status).toBe(200);
  for (const [method, path] of [
    ["GET", `/agent/summary?${year()}`],
    ["GET", "/api/v1/identity/keys"],
    ["POST", "/click-tokens"],
    ["GET", `/ctx/ctx_${"a".repeat(43)}`],
    ["GET", "/resolve?domain=example.com"],
    ["GET", "/openapi/json"],
  ] as const) {
    const res = await callApp(app, method, path, { key: agent.key, body: method === "POST" ? {} : undefined });
    expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 404, code: "route_not_found" });
  }
});

test("an api instance serves reads and the control plane, and answers 404 for ingest; a jobs instance only health", async () => {
  const api = await instanceServing("api");
  const agent = await createTestOrg({ type: "agent" });
  expect((await callApp(api, "GET", `/agent/summary?${year()}`, { key: agent.key })).status).toBe(200);
  const ingest = await callApp(api, "POST", "/events", { key: agent.key, body: batch([]) });
  expect([ingest.status, ingest.body.code]).toEqual([404, "route_not_found"]);

  const jobs = await instanceServing("jobs");
  expect((await callApp(jobs, "GET", "/health")).status).toBe(200);
  expect((await callApp(jobs, "GET", `/agent/summary?${year()}`, { key: agent.key })).status).toBe(404);
  expect((await callApp(jobs, "POST", "/events", { key: agent.key, body: batch([]) })).status).toBe(404);
});

test("the API docs serve every operation at {base_url} but the ingest ones, at {ingest_url}", async () => {
  const app = await instanceServing("all", {
    PUBLIC_BASE_URL: "https://api.example.com",
    PUBLIC_INGEST_URL: "https://ingest.example.com",
  });
  const doc = (await callApp(app, "GET", "/openapi/json")).body;
  expect(doc.servers.map((server: { url: string }) => server.url)).toEqual(["https://api.example.com"]);
  const ingest = [{ url: "https://ingest.example.com", description: "{ingest_url}: event and session ingest" }];
  for (const path of ["/events", "/sessions/start", "/sessions/end", "/sessions/bulk"]) {
    expect({ path, servers: doc.paths[path].post.servers }).toEqual({ path, servers: ingest });
  }
  // Click tokens and domain resolution are served with the reads, by an api instance.
  for (const [path, method] of [
    ["/content-owners/summary", "get"],
    ["/click-tokens", "post"],
    ["/ctx/{token}", "get"],
    ["/resolve", "get"],
  ] as const) {
    expect({ path, servers: doc.paths[path][method].servers }).toEqual({ path, servers: undefined });
  }
});

test("a service started with an unknown role stops with one line naming it", async () => {
  const { exitCode, stderr, stdout } = await runUntilExit(serviceEnv({ SERVICE_ROLES: "ingest,writer" }));
  expect(exitCode).toBe(2);
  expect(`${stdout}${stderr}`.trim()).toBe(
    'Invalid configuration: SERVICE_ROLES "ingest,writer" names unknown role "writer"; use all, or a comma-separated list of ingest, api, jobs',
  );
});
