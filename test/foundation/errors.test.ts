import { describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { ProblemError, type ProblemExtensions } from "../../src/core/problem.ts";
import { httpPlugin } from "../../src/http/plugin.ts";
import { problemBody } from "../../src/http/problem.ts";
import { routeMethodIndex } from "../../src/http/routes.ts";
import { testRuntime } from "../support/runtime.ts";

const maxBytes = 2048;

/** A small app on the real HTTP plugin, so every error class can be provoked on purpose. */
async function errorApp() {
  const { ctx } = await testRuntime();
  const limited = { ...ctx, config: { ...ctx.config, MAX_BODY_BYTES: maxBytes } };
  let methods: (path: string) => string[] = () => [];
  const app = new Elysia()
    .use(
      httpPlugin(limited, {
        allowedMethods: (path) => methods(path),
        accessOf: () => undefined,
        bodyOf: () => undefined,
        shedsWhenFull: () => false,
        integerQueryOf: () => [],
      }),
    )
    .post("/echo", ({ body }) => body, {
      body: t.Object({ name: t.String({ minLength: 1 }), count: t.Integer({ minimum: 0 }), tags: t.Array(t.String()) }),
    })
    .get("/items/:id", ({ params }) => params)
    .get("/boom", () => {
      throw new Error("secret internals at /srv/app.ts:12");
    })
    .get("/wrong-answer", () => ({ count: "not a number" }) as unknown as { count: number }, {
      response: t.Object({ count: t.Integer() }),
    });
  methods = routeMethodIndex(app.routes);
  return app;
}

async function send(path: string, init: RequestInit = {}) {
  const app = await errorApp();
  const response = await app.handle(new Request(`http://test.local${path}`, init));
  return { response, body: (await response.json()) as Record<string, any> };
}

const json = { "content-type": "application/json" };

function expectProblem(response: Response, body: Record<string, any>, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(body).toMatchObject({ status, code, type: `urn:content-telemetry:problem:${code}` });
  expect(typeof body.title).toBe("string");
  expect(body.request_id).toBe(response.headers.get("x-request-id") as string);
}

describe("every error is a problem document", () => {
  test("malformed JSON → 400", async () => {
    const { response, body } = await send("/echo", { method: "POST", headers: json, body: '{"name": "a",' });
    expectProblem(response, body, 400, "malformed_json");
  });

  test("invalid UTF-8 → 400", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    const { response, body } = await send("/echo", { method: "POST", headers: json, body: bytes });
    expectProblem(response, body, 400, "invalid_utf8");
  });

  test("deeply nested JSON → 4xx, not a crash", async () => {
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const { response } = await send("/echo", { method: "POST", headers: json, body: deep.slice(0, maxBytes - 1) });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
  });

  test("wrong content type → 415", async () => {
    const { response, body } = await send("/echo", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "name=a",
    });
    expectProblem(response, body, 415, "unsupported_media_type");
  });

  test("oversize body → 413", async () => {
    const big = JSON.stringify({ name: "x".repeat(maxBytes), count: 1, tags: [] });
    const { response, body } = await send("/echo", { method: "POST", headers: json, body: big });
    expectProblem(response, body, 413, "payload_too_large");
  });

  test("validation → 400 listing every failing field by path", async () => {
    const { response, body } = await send("/echo", {
      method: "POST",
      headers: json,
      body: JSON.stringify({ name: "", count: -1, tags: ["ok", 7] }),
    });
    expectProblem(response, body, 400, "validation_failed");
    const paths = (body.errors as { path: string }[]).map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(["/name", "/count", "/tags/1"]));
  });

  test("unknown route → 404", async () => {
    const { response, body } = await send("/nowhere");
    expectProblem(response, body, 404, "route_not_found");
  });

  test("known path, wrong method → 405 with Allow", async () => {
    const { response, body } = await send("/items/42", { method: "DELETE" });
    expectProblem(response, body, 405, "method_not_allowed");
    expect(response.headers.get("allow")).toBe("GET");
  });

  test("an unexpected exception → 500 problem without internals", async () => {
    const { response, body } = await send("/boom");
    expectProblem(response, body, 500, "internal_error");
    expect(JSON.stringify(body)).not.toContain("secret internals");
  });

  test("an answer that breaks its own schema is the service's fault → 500, never a 400 blaming the caller", async () => {
    const { response, body } = await send("/wrong-answer");
    expectProblem(response, body, 500, "internal_error");
    expect(body.errors).toBeUndefined();
  });

  test("a caller's request id is echoed; otherwise one is generated", async () => {
    const mine = await send("/nowhere", { headers: { "x-request-id": "trace-123" } });
    expect(mine.response.headers.get("x-request-id")).toBe("trace-123");
    const generated = await send("/nowhere", { headers: { "x-request-id": "bad id with spaces" } });
    expect(generated.response.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

test("a problem's standard members keep their values and come first, whatever its extensions are named", () => {
  // ProblemExtensions refuses these names at compile time; the cast stands for a value typed loosely elsewhere.
  const loose = { status: "approved", code: "other", errors: [] } as unknown as ProblemExtensions;
  const body = problemBody(new ProblemError("conflict", "already there", loose), "/x", "req-1");
  expect(Object.keys(body)).toEqual(["type", "title", "status", "code", "detail", "instance", "request_id", "errors"]);
  expect([body.status, body.code, body.type]).toEqual([409, "conflict", "urn:content-telemetry:problem:conflict"]);
});
