import { describe, expect, test } from "bun:test";
import { streamEventBatches } from "../../src/modules/reads/service.ts";
import { insertEvents } from "../support/events.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
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
    expect(rows[0]).toBe(
      "event_id,session_id,event_type,content_url,event_timestamp,event_data,platform_id,agent_id,signature_status",
    );
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
        "unverified",
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

  test("CSV text that starts like a formula gets a leading ' so spreadsheets show it as text; NDJSON keeps it", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const reporter = await createTestOrg({ type: "platform" });
    const start = Date.UTC(2026, 6, 1);
    const agents = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", "plain=", "x-1"];
    await insertEvents(
      ctx.sql,
      agents.map((agent, i) => ({
        event_time: new Date(start + i * 1000),
        org_id: reporter.id,
        content_url: `https://${owner.domain}/f`,
        agent_id: agent,
      })),
    );
    const range = `since=${new Date(start).toISOString()}&until=${new Date(start + 60_000).toISOString()}`;
    const csv = await download(`/content-owners/export?${range}&format=csv`, owner.key);
    const agentColumn = csv.text
      .split("\r\n")
      .slice(1, -1)
      .map((row) => row.split(",").at(-2));
    expect(agentColumn).toEqual(["'=1+1", "'+SUM(A1)", "'-2+3", "'@cmd", "'\tx", `"'\rx"`, "plain=", "x-1"]);
    const ndjson = await download(`/content-owners/export?${range}&format=ndjson`, owner.key);
    const lines = ndjson.text.trimEnd().split("\n");
    expect(lines.map((line) => JSON.parse(line).agent_id)).toEqual(agents);
  });

  test("a query the database refuses is a problem response, not a 200 cut off mid-stream", async () => {
    const platform = await createTestOrg({ type: "platform" });
    for (const format of ["ndjson", "csv"]) {
      const res = await download(`/agent/export?format=${format}&agent_id=a%00b`, platform.key);
      expect({ format, status: res.status, type: res.type }).toEqual({
        format,
        status: 400,
        type: "application/problem+json",
      });
      expect(JSON.parse(res.text).code).toBe("invalid_text");
    }
  });

  test("a client that stops reading holds up no other request, and the export resumes where it stopped", async () => {
    const { ctx, app } = await testRuntime();
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
    const response = await app.handle(
      new Request(`http://test.local/content-owners/export?since=${new Date(start).toISOString()}`, {
        headers: { "x-api-key": owner.key },
      }),
    );
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    const first = await reader.read();
    text += decoder.decode(first.value, { stream: true });
    // More pages are to come; the client pauses. Reads and writes on the only
    // connection of the embedded engine go on meanwhile.
    const others = await Promise.all([
      call("GET", "/content-owners/summary", { key: owner.key }),
      ctx.sql<{ ok: number }[]>`SELECT 1 AS ok`,
    ]);
    expect(others[0].status).toBe(200);
    expect(others[1][0]?.ok).toBe(1);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      text += decoder.decode(chunk.value, { stream: true });
    }
    const ids = text
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line).event_id);
    expect(ids).toHaveLength(2500);
    expect(new Set(ids).size).toBe(2500);
  }, 30_000);

  test("pages continue right after the last row: equal times and microseconds are neither lost nor repeated", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const reporters = await Promise.all([1, 2].map(() => createTestOrg({ type: "platform" })));
    // 60 events over 6 distinct times a microsecond apart, from two reporters (the
    // last key column): pages of 7 end in the middle of runs of equal times.
    const events = Array.from({ length: 60 }, (_, i) => ({
      event_time: `2026-03-01T00:00:00.00000${i % 6}Z`,
      org_id: (reporters[i % 2] as { id: string }).id,
      content_url: `https://${owner.domain}/m${i}`,
    }));
    await insertEvents(ctx.sql, events);
    const scope = { view: "owner" as const, orgId: owner.id, domains: [owner.domain as string] };
    const range = { since: new Date("2026-03-01T00:00:00Z"), until: new Date("2026-03-01T00:00:01Z") };
    const pages: string[][] = [];
    for await (const page of streamEventBatches(ctx.sql, scope, range, {}, 7))
      pages.push(page.map((e) => e.content_url ?? ""));
    expect(pages.map((page) => page.length)).toEqual([7, 7, 7, 7, 7, 7, 7, 7, 4]);
    const exported = pages.flat();
    expect(new Set(exported)).toEqual(new Set(events.map((e) => e.content_url)));
    expect(exported).toHaveLength(60);
  });

  test("an open range reaches every stored event, even ones dated beyond the clock", async () => {
    const { ctx } = await testRuntime();
    const owner = await createTestOrg();
    const reporter = await createTestOrg({ type: "platform" });
    const now = Date.now();
    // Ingest refuses such times; other writers (a clock jump, a restore) may not.
    const times = [now - 1_800_000, now + 7_200_000, Date.UTC(2100, 0, 1)];
    await insertEvents(
      ctx.sql,
      times.map((t, i) => ({
        event_time: new Date(t),
        org_id: reporter.id,
        content_url: `https://${owner.domain}/f${i}`,
      })),
    );
    const scope = { view: "owner" as const, orgId: owner.id, domains: [owner.domain as string] };
    const exported: string[] = [];
    for await (const page of streamEventBatches(ctx.sql, scope, { since: new Date(now - 3_600_000), until: null })) {
      exported.push(...page.map((e) => e.content_url ?? ""));
    }
    expect(exported).toEqual(times.map((_, i) => `https://${owner.domain}/f${i}`));
  });

  test("export needs the same access as other reads", async () => {
    const owner = await createTestOrg();
    const platform = await createTestOrg({ type: "platform" });
    expect((await download(`/content-owners/export?delegated_from=${owner.id}`, platform.key)).status).toBe(403);
  });
});
