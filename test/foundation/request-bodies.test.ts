import { describe, expect, test } from "bun:test";
import { gzipSync, zstdCompressSync } from "node:zlib";
import { createApp } from "../../src/app.ts";
import { overLongArrays } from "../../src/core/array-bounds.ts";
import { SessionStartRequest } from "../../src/modules/ingest/model.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { callApp, type RequestHandler } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";
import { batch, validEvents } from "../support/telemetry-events.ts";
import { storedEvents } from "../support/telemetry-store.ts";

const domain = "bodies.example.net";

async function post(
  path: string,
  headers: Record<string, string>,
  body: string | Uint8Array | ReadableStream<Uint8Array>,
  app?: RequestHandler,
) {
  const handler = app ?? (await testRuntime()).app;
  const response = await handler.handle(
    new Request(`http://test.local${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
      ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
    } as RequestInit),
  );
  return { response, body: (await response.json()) as Record<string, any> };
}

const uuids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());

describe("over-long arrays are refused on their length", () => {
  test("the pre-check names the array and never enters it", () => {
    const value = { prior_session_ids: uuids(101), agent_id: "a" };
    expect(overLongArrays(SessionStartRequest, value)).toEqual([
      { path: "/prior_session_ids", message: "must hold at most 100 items" },
    ]);
    expect(overLongArrays(SessionStartRequest, { prior_session_ids: uuids(100) })).toEqual([]);
  });

  test("100,000 session ids are a 400 naming the field, and an anonymous caller learns only 401", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const body = JSON.stringify({ prior_session_ids: uuids(100_000) });
    const refused = await post("/sessions/start", { "x-api-key": agent.key }, body);
    expect(refused.response.status).toBe(400);
    expect(refused.body.errors).toEqual([{ path: "/prior_session_ids", message: "must hold at most 100 items" }]);
    const anonymous = await post("/sessions/start", {}, body);
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.body.errors).toBeUndefined();
  });

  test("a batch of 100,000 events is refused at /events, nothing stored", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const events = Array.from({ length: 100_000 }, () => ({ type: 1 }));
    const { response, body } = await post("/events", { "x-api-key": agent.key }, JSON.stringify(batch(events)));
    expect(response.status).toBe(400);
    expect(body.errors).toEqual([{ path: "/events", message: "must hold at most 1000 items" }]);
    expect(await storedEvents(agent.id)).toEqual([]);
  });
});

describe("compressed bodies", () => {
  const document = () => JSON.stringify(batch([validEvents.retrieved(domain)], { session_id: crypto.randomUUID() }));

  test("gzip and zstd bodies are stored like plain ones", async () => {
    const agent = await createTestOrg({ type: "agent" });
    for (const [encoding, compress] of [
      ["gzip", gzipSync],
      ["zstd", zstdCompressSync],
    ] as const) {
      const { response } = await post(
        "/events",
        { "x-api-key": agent.key, "content-encoding": encoding },
        compress(document()),
      );
      expect(response.status).toBe(200);
    }
    expect(await storedEvents(agent.id)).toHaveLength(2);
  });

  test("a gzip bomb stops at MAX_BODY_BYTES decompressed: 413", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    const { response, body } = await post("/events", { "x-api-key": agent.key, "content-encoding": "gzip" }, bomb);
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(body.detail).toContain("once decompressed");
  });

  test("another encoding is 415, a body that is not what it claims is 400", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const other = await post("/events", { "x-api-key": agent.key, "content-encoding": "compress" }, document());
    expect(other.response.status).toBe(415);
    expect(other.body.code).toBe("unsupported_content_encoding");
    const notGzip = await post("/events", { "x-api-key": agent.key, "content-encoding": "gzip" }, document());
    expect(notGzip.response.status).toBe(400);
    expect(notGzip.body.code).toBe("malformed_body");
  });
});

describe("bodies arrive in bounded size and time", () => {
  test("a streamed body past MAX_BODY_BYTES is 413 problem+json, with no Content-Length to go by", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const { ctx } = await testRuntime();
    const chunks = Math.ceil(ctx.config.MAX_BODY_BYTES / 65_536) + 2;
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ >= 10 * chunks) controller.close();
        else controller.enqueue(new Uint8Array(65_536).fill(0x20));
      },
    });
    const { response, body } = await post("/events", { "x-api-key": agent.key }, stream);
    expect(response.status).toBe(413);
    expect(body.code).toBe("payload_too_large");
    // Reading stopped at the limit, not at the end of the stream.
    expect(sent).toBeLessThan(2 * chunks);
  });

  test("a stalled upload is 408 after BODY_TIMEOUT_SECONDS", async () => {
    const agent = await createTestOrg({ type: "agent" });
    const { ctx } = await testRuntime();
    const app = createApp({ ...ctx, config: { ...ctx.config, BODY_TIMEOUT_SECONDS: 1 } });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"agent_id":'));
      },
    });
    const started = performance.now();
    const { response, body } = await post("/sessions/start", { "x-api-key": agent.key }, stream, app);
    expect(response.status).toBe(408);
    expect(body.code).toBe("body_timeout");
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe("anonymous callers", () => {
  test("get 401 before their body is read, whatever it holds", async () => {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(65_536));
      },
    });
    const { response } = await post("/events", {}, stream);
    expect(response.status).toBe(401);
    expect(pulled).toBeLessThan(3);
    const keys = await callApp((await testRuntime()).app, "POST", "/api/v1/identity/keys", { body: { name: 1 } });
    expect(keys.status).toBe(401);
    expect(keys.body.errors).toBeUndefined();
  });
});

describe("deeply nested bodies are refused before validation", () => {
  test("16,000 nested arrays in a field are a 400 naming where, on every kind of body", async () => {
    const { app } = await testRuntime();
    const org = await createTestOrg();
    const platform = await createTestOrg({ type: "platform" });
    const nested = (field: string, prefix = "") => `{${prefix}"${field}":${"[".repeat(16_000)}${"]".repeat(16_000)}}`;
    const cases: [string, Record<string, string>, string][] = [
      ["/api/v1/identity/auth/magic-link", {}, nested("email")],
      [
        "/api/v1/identity/keys",
        { "x-api-key": await org.keyWith(["identity:write"]) },
        nested("scopes", '"name":"k",'),
      ],
      ["/click-tokens", { "x-api-key": platform.key }, nested("content_url", `"session_id":"${crypto.randomUUID()}",`)],
    ];
    for (const [path, headers, body] of cases) {
      const refused = await post(path, headers, body, app);
      expect({ path, status: refused.response.status }).toEqual({ path, status: 400 });
      expect(refused.body.errors?.[0]?.message).toBe("nesting deeper than 12 levels");
    }
  });
});

test("a body that is not a JSON object is refused where the route takes an object, nothing stored", async () => {
  const { app, ctx } = await testRuntime();
  const agent = await createTestOrg({ type: "agent" });
  for (const body of ["0", "true", '"s"', "[]", '[{"initiator_type":"agent"}]']) {
    const refused = await post("/sessions/start", { "x-api-key": agent.key }, body, app);
    expect({ body, status: refused.response.status, errors: refused.body.errors }).toEqual({
      body,
      status: 400,
      errors: [{ path: "/", message: "must be a JSON object" }],
    });
  }
  const [sessions] = await ctx.sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM sessions WHERE org_id = ${agent.id}::uuid`;
  expect(sessions?.n).toBe(0);
});

describe("a string of the wrong form is refused saying which form", () => {
  test("an e-mail address, and a name with a NUL, a lone surrogate or a line break", async () => {
    const { app } = await testRuntime();
    const org = await createTestOrg();
    const writer = await org.keyWith(["identity:read", "identity:write"]);
    const link = await callApp(app, "POST", "/api/v1/identity/auth/magic-link", { body: { email: "not-an-email" } });
    expect([link.status, link.body.errors]).toEqual([400, [{ path: "/email", message: "must be an email address" }]]);
    for (const name of ["a\u0000b", "a\ud800b", "a\nb"]) {
      const key = await callApp(app, "POST", "/api/v1/identity/keys", { key: writer, body: { name } });
      expect([key.status, key.body.errors]).toEqual([
        400,
        [
          {
            path: "/name",
            message: "must be text on one line, without control characters or unpaired UTF-16 surrogates",
          },
        ],
      ]);
    }
  });
});

describe("a refusal says what is wrong in words, wherever the value was", () => {
  test("a missing member is required, an empty change names no field, a query number is an integer, a path part is in the path", async () => {
    const { app } = await testRuntime();
    const org = await createTestOrg();
    const key = await org.keyWith(["identity:read", "identity:write", "telemetry:read"]);
    const refusal = async (method: string, path: string, body?: unknown) => {
      const res = await callApp(app, method, path, { key, body });
      return [res.status, res.body.detail, res.body.errors];
    };
    expect(await refusal("POST", "/api/v1/identity/webhooks", { event_types: ["ping"] })).toEqual([
      400,
      "the request body is invalid: /url",
      [{ path: "/url", message: "is required: a string" }],
    ]);
    expect(await refusal("POST", "/api/v1/identity/delegations", {})).toEqual([
      400,
      "the request body is invalid: /grantee_org_id",
      [{ path: "/grantee_org_id", message: "is required: a UUID" }],
    ]);
    expect(await refusal("PATCH", "/api/v1/identity/settings", {})).toEqual([
      400,
      "the request body is invalid: /",
      [{ path: "/", message: "must name at least one field" }],
    ]);
    expect(await refusal("GET", "/content-owners/events?limit=abc")).toEqual([
      400,
      "the query parameters are invalid: /limit",
      [{ path: "/limit", message: "must be an integer" }],
    ]);
    // Read as JavaScript numbers these would be 2, 16, 10, 2 and 0: only decimal digits are integers here.
    for (const query of ["limit=0x2", "offset=0x10", "limit=1e1", "limit=%202", "offset=%20", "limit=2.0"]) {
      const path = `/content-owners/events?${query}`;
      const [status, , errors] = await refusal("GET", path);
      expect({ path, status, message: (errors as { message: string }[])?.[0]?.message }).toEqual({
        path,
        status: 400,
        message: "must be an integer",
      });
    }
    expect(await refusal("GET", "/api/v1/identity/keys?limit=1&limit=2")).toEqual([
      400,
      "the query parameters are invalid: /limit",
      [{ path: "/limit", message: "is given more than once" }],
    ]);
    expect((await callApp(app, "GET", "/content-owners/events?limit=-1&offset=7", { key })).status).toBe(400);
    const head = new Request("http://test.local/content-owners/events?limit=0x2", {
      method: "HEAD",
      headers: { "x-api-key": key },
    });
    expect((await app.handle(head)).status).toBe(400);
    expect((await callApp(app, "GET", "/content-owners/events?limit=2&offset=7", { key })).status).toBe(200);
    expect(await refusal("GET", "/api/v1/identity/webhooks/not-a-uuid")).toEqual([
      400,
      "the path parameters are invalid: /id",
      [{ path: "/id", message: "must be a UUID" }],
    ]);
  });
});
