import { expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { connect } from "../../src/db/client.ts";
import { startEmbeddedEngine } from "../../src/db/embedded.ts";
import { buildContext } from "../../src/runtime.ts";
import { testRuntime } from "../support/runtime.ts";

test("GET /ready is 503 with a problem body once the database stops, 200 while it runs", async () => {
  const { ctx: shared } = await testRuntime();
  const engine = await startEmbeddedEngine(undefined);
  const sql = connect(`postgres://postgres@${engine.host}:${engine.port}/postgres`, 1);
  const app = createApp(
    buildContext(shared.config, shared.log, {
      sql,
      kind: "embedded",
      maintenance: [],
      listen: shared.db.listen,
    }),
  );
  const ready = () => app.handle(new Request("http://test.local/ready"));
  try {
    const up = await ready();
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ status: "ready", database: "embedded" });

    await engine.stop();
    const down = await ready();
    expect(down.status).toBe(503);
    expect(down.headers.get("content-type")).toBe("application/problem+json");
    expect(await down.json()).toMatchObject({ status: 503, code: "database_unavailable" });

    const health = await app.handle(new Request("http://test.local/health"));
    expect(health.status).toBe(200);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}, 30_000);
