import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app.ts";
import { insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { rejectionOf } from "../support/rejection.ts";
import { testRuntime } from "../support/runtime.ts";

async function download(path: string, key: string, accept?: string) {
  const { app } = await testRuntime();
  const headers: Record<string, string> = { "x-api-key": key };
  if (accept) headers.accept = accept;
  const response = await app.handle(new Request(`http://test.local${path}`, { headers }));
  return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() };
}

describe("export", () => {
  test("streams every event of the range, oldest first, as NDJSON or CSV", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const reporter = await createTestOrg({ type: "platform" });
    const start = Date.UTC(2026, 4, 1);
    // More rows than one cursor batch, so the stream spans several fetches.
    const sessions = Array.from({ length: 50 }, () => crypto.randomUUID());
    await insertEvents(
      ctx.sql,
      Array.from({ length: 2500 }, (_, i) => ({
        event_time: new Date(start + i * 60_000),
        org_id: reporter.id,
        content_url: `https://${owner.domain}/p${i % 7}`,
        session_id: sessions[i % 50],
        data: { note: 'a "quoted", comma\nline' },
      })),
    );
    const range = `since=${new Date(start + 10 * 60_000).toISOString()}&until=${new Date(start + 2400 * 60_000).toISOString()}`;

    const ndjson = await download(`/content-owners/export?${range}`, owner.key);
    expect(ndjson.status).toBe(200);
    expect(ndjson.type).toContain("application/x-ndjson");
    const lines = ndjson.text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(2390);
    const newestPage = await call("GET", `/content-owners/events?${range}&limit=5`, { key: owner.key });
    expect(lines.slice(-5).reverse()).toEqual(newestPage.body.items);

    const csv = await download(`/content-owners/export?${range}`, owner.key, "text/csv");
    expect(csv.type).toContain("text/csv");
    const rows = csv.text.split("\r\n");
    expect(rows[0]).toBe("event_id,session_id,event_type,content_url,event_timestamp,event_data,platform_id,agent_id");
    expect(rows[1]).toBe(
      [
        lines[0].event_id,
        lines[0].session_id,
        "content_retrieved",
        lines[0].content_url,
        lines[0].event_timestamp,
        '"{""note"":""a \\""quoted\\"", comma\\nline""}"',
        reporter.id,
        "",
      ].join(","),
    );
    expect(rows.filter((row) => row !== "")).toHaveLength(2391);

    const forced = await download(`/content-owners/export?${range}&format=ndjson`, owner.key, "text/csv");
    expect(forced.type).toContain("application/x-ndjson");
    const negotiated: [string, string][] = [
      ["text/csv;q=0, */*", "application/x-ndjson"],
      ["application/x-ndjson;q=0.5, text/csv", "text/csv"],
      ["text/csv;q=0.2, application/x-ndjson", "application/x-ndjson"],
      ["Text/CSV; charset=utf-8", "text/csv"],
    ];
    for (const [accept, expected] of negotiated) {
      const res = await download(`/content-owners/export?${range}`, owner.key, accept);
      expect({ accept, type: res.type.split(";")[0] }).toEqual({ accept, type: expected });
    }
    const agentCsv = await download(`/agent/export?${range}&format=csv`, reporter.key);
    const agentRows = agentCsv.text.split("\r\n");
    expect(agentRows.length).toBe(rows.length);
    expect(agentRows).toEqual(rows);
  });

  test("a query the database refuses is a problem response, not a 200 cut off mid-stream", async () => {
    const platform = await createTestOrg({ type: "platform" });
    for (const format of ["ndjson", "csv"]) {
      const res = await download(`/agent/export?format=${format}&agent_id=a%00b`, platform.key);
      expect({ format, status: res.status, type: res.type }).toEqual({
        format,
        status: 422,
        type: "application/problem+json",
      });
      expect(JSON.parse(res.text).code).toBe("invalid_text");
    }
  });

  test("an export whose client stops reading is ended, and its database connection freed", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const reporter = await createTestOrg({ type: "platform" });
    const start = Date.UTC(2026, 5, 1);
    await insertEvents(
      ctx.sql,
      Array.from({ length: 2500 }, (_, i) => ({
        event_time: new Date(start + i * 60_000),
        org_id: reporter.id,
        content_url: `https://${owner.domain}/q${i % 5}`,
      })),
    );
    const app = createApp({ ...ctx, config: { ...ctx.config, EXPORT_IDLE_TIMEOUT_SECONDS: 1 } });
    const response = await app.handle(
      new Request(`http://test.local/content-owners/export?since=${new Date(start).toISOString()}`, {
        headers: { "x-api-key": owner.key },
      }),
    );
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).done).toBe(false);
    // The cursor is open with more batches to come; the client now reads nothing. On
    // the embedded engine this query can only run once the export let go of the connection.
    const [row] = await ctx.sql<{ ok: number }[]>`SELECT 1 AS ok`;
    expect(row?.ok).toBe(1);
    expect(String(await rejectionOf(reader.read()))).toContain("export abandoned");
  }, 30_000);

  test("export needs the same access as other reads", async () => {
    const owner = await createTestOrg();
    const platform = await createTestOrg({ type: "platform" });
    expect((await download(`/content-owners/export?delegated_from=${owner.id}`, platform.key)).status).toBe(403);
  });
});
