import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { createTestOrg } from "../support/fixtures.ts";
import { type CallOptions, callApp, overHttp } from "../support/http.ts";
import { memberOf } from "../support/identity.ts";
import { msUntil } from "../support/polling.ts";
import { testRuntime } from "../support/runtime.ts";
import { type ServiceProcess, serviceEnv, startService } from "../support/service-process.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { tempDir } from "../support/temp-dirs.ts";

const root = join(import.meta.dir, "../..");

describe.skipIf(!process.env.TEST_DATABASE_URL)("two service instances on one TimescaleDB server", () => {
  let a: ServiceProcess;
  let b: ServiceProcess;
  beforeAll(async () => {
    const { db } = await testRuntime();
    // A long key cache: only the notifications can make a revocation apply within a second.
    const env = serviceEnv({
      DATABASE_URL: db.url,
      KEY_CACHE_TTL_SECONDS: "300",
      SIGN_IN_PURGE_CRON: "* * * * * *",
      LOG_LEVEL: "debug",
      RATE_LIMIT_CONTROL_PER_SECOND: "0",
      RATE_LIMIT_INGEST_PER_SECOND: "0",
    });
    [a, b] = await Promise.all([startService(env), startService(env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const viaA = (method: string, path: string, options?: CallOptions) =>
    callApp(overHttp(a.base), method, path, options);
  const viaB = (method: string, path: string, options?: CallOptions) =>
    callApp(overHttp(b.base), method, path, options);

  test("a scheduled job runs once per tick: both instances fire, one runs it", async () => {
    const since = Date.now();
    await Bun.sleep(4500);
    const ticksOf = (service: ServiceProcess, msg: string) =>
      service.logs
        .filter((line) => line.job === "sign-in-purge" && line.msg === msg && Date.parse(line.tick) >= since)
        .map((line) => line.tick as string);
    const ran = [...ticksOf(a, "job finished"), ...ticksOf(b, "job finished")];
    const skipped = [...ticksOf(a, "tick run by another instance"), ...ticksOf(b, "tick run by another instance")];
    expect(ran.length).toBeGreaterThanOrEqual(3);
    expect(new Set(ran).size).toBe(ran.length);
    // Every tick one instance ran, the other fired for and left alone.
    expect(skipped.filter((tick) => ran.includes(tick)).length).toBeGreaterThanOrEqual(ran.length - 1);
    const { ctx } = await testRuntime();
    const [claims] = await ctx.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM job_ticks WHERE job = 'sign-in-purge' AND tick = ANY (${ran}::timestamptz[])`;
    expect(claims?.n).toBe(ran.length);
  }, 20_000);

  // A NOTIFY committed while a listener's connection is down never reaches it. The
  // revocation here announces nothing at all (its triggers are off for the one
  // transaction), so only the dropping of everything held on listening again can
  // make the instances refuse the key.
  test("a key revoked while the instances' notification connections were down is refused once they listen again", async () => {
    const { ctx } = await testRuntime();
    const platform = await createTestOrg({ type: "platform" });
    const reader = await platform.keyWith(["identity:read"]);
    expect((await viaB("GET", "/api/v1/identity/keys", { key: reader })).status).toBe(200);
    await ctx.sql.begin(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`UPDATE api_keys SET revoked_at = now() WHERE org_id = ${platform.id}::uuid`;
    });
    // Unannounced, the revocation is not seen: B answers from its cache.
    expect((await viaB("GET", "/api/v1/identity/keys", { key: reader })).status).toBe(200);

    const listeners = async () =>
      (
        await ctx.sql<{ pid: number }[]>`
          SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'listen %'`
      ).map((row) => row.pid);
    const before = await listeners();
    const resumedBefore = b.logs.filter((line) => line.msg?.startsWith("auth change notifications resumed")).length;
    await ctx.sql`SELECT pg_terminate_backend(pid) FROM unnest(${before}::int[]) pid`;
    const relistened = await msUntil(async () => {
      const now = await listeners();
      return now.filter((pid) => !before.includes(pid)).length >= before.length;
    });
    expect(relistened).toBeLessThan(5000);
    const elapsed = await msUntil(
      async () => (await viaB("GET", "/api/v1/identity/keys", { key: reader })).status === 401,
    );
    expect(elapsed).toBeLessThan(1000);
    expect(b.logs.filter((line) => line.msg?.startsWith("auth change notifications resumed")).length).toBeGreaterThan(
      resumedBefore,
    );
  }, 20_000);

  test("a key revoked through one instance is refused by the other within a second", async () => {
    const platform = await createTestOrg({ type: "platform" });
    const admin = await platform.keyWith(["identity:read", "identity:write"]);
    const reader = await platform.keyWith(["identity:read"]);
    expect((await viaB("GET", "/api/v1/identity/keys", { key: reader })).status).toBe(200);
    const listed = await viaA("GET", "/api/v1/identity/keys", { key: admin });
    const readerId = listed.body.items.find((k: { scopes: string[] }) => k.scopes.length === 1)?.id;
    expect((await viaA("DELETE", `/api/v1/identity/keys/${readerId}`, { key: admin })).status).toBe(200);
    const elapsed = await msUntil(
      async () => (await viaB("GET", "/api/v1/identity/keys", { key: reader })).status === 401,
    );
    expect(elapsed).toBeLessThan(1000);
  }, 20_000);

  test("a domain removed through one instance stops the other accepting the owner's events for it", async () => {
    const owner = await createTestOrg();
    const writer = await owner.keyWith(["telemetry:write", "identity:write"]);
    const event = () => validEvents.retrieved(owner.domain as string, { source_role: "origin" });
    expect((await viaB("POST", "/events", { key: writer, body: batch([event()]) })).status).toBe(200);
    expect((await viaA("DELETE", `/api/v1/identity/domains/${owner.domain}`, { key: writer })).status).toBe(204);
    const elapsed = await msUntil(
      async () => (await viaB("POST", "/events", { key: writer, body: batch([event()]) })).status === 403,
    );
    expect(elapsed).toBeLessThan(1000);
  }, 20_000);

  test("a session ended or a member removed through one instance is refused by the other at once", async () => {
    const org = await createTestOrg();
    const owner = await memberOf(org.id, "owner");
    const member = await memberOf(org.id, "member");
    const settings = `/api/v1/identity/settings?org_id=${org.id}`;
    const bearer = (session: string) => ({ headers: { authorization: `Bearer ${session}` } });
    expect((await viaB("GET", settings, bearer(member.session))).status).toBe(200);
    expect(
      (await viaA("DELETE", `/api/v1/identity/members/${member.userId}?org_id=${org.id}`, bearer(owner.session)))
        .status,
    ).toBe(204);
    expect((await viaB("GET", settings, bearer(member.session))).status).toBe(403);

    expect((await viaB("GET", settings, bearer(owner.session))).status).toBe(200);
    expect((await viaA("POST", "/api/v1/identity/auth/sign-out", bearer(owner.session))).status).toBe(204);
    expect((await viaB("GET", settings, bearer(owner.session))).status).toBe(401);
  }, 20_000);
});

describe("the embedded engine shared by a service and the CLI", () => {
  let dataDir: string;
  let service: ServiceProcess;
  beforeAll(async () => {
    dataDir = tempDir("svc-data-");
    service = await startService(serviceEnv({ DATABASE_URL: "", DATA_DIR: dataDir, KEY_CACHE_TTL_SECONDS: "300" }));
  }, 60_000);
  afterAll(async () => {
    await service?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const shell = async (...args: string[]) => {
    const proc = Bun.spawn([process.execPath, "src/cli/index.ts", ...args, "--json"], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: "", DATA_DIR: dataDir },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    return JSON.parse(out);
  };

  test("a key revoked with the CLI is refused by the running service within a second", async () => {
    const org = await shell("org", "create", "--name", "Shared", "--type", "platform");
    const key = await shell("key", "create", "--org", org.id, "--scopes", "identity:read");
    const keys = () => callApp(overHttp(service.base), "GET", "/api/v1/identity/keys", { key: key.key });
    expect((await keys()).status).toBe(200);
    await shell("key", "revoke", "--id", key.id);
    expect(await msUntil(async () => (await keys()).status === 401)).toBeLessThan(1000);
  }, 30_000);

  test("a second service on the same data directory is refused with a clear message", async () => {
    const second = Bun.spawn([process.execPath, "src/main.ts"], {
      cwd: root,
      env: serviceEnv({ DATABASE_URL: "", DATA_DIR: dataDir }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, code] = await Promise.all([new Response(second.stdout).text(), second.exited]);
    expect(code).toBe(1);
    expect(out).toContain(`DATA_DIR ${dataDir} is in use by the service with pid ${service.proc.pid}`);
  }, 30_000);
});
