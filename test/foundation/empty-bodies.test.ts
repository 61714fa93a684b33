import { expect, test } from "bun:test";
import { t } from "elysia";
import { routeBodyIndex } from "../../src/http/routes.ts";
import { createTestOrg } from "../support/fixtures.ts";
import { call } from "../support/http.ts";
import { testRuntime } from "../support/runtime.ts";

const keys = "/api/v1/identity/keys";

test("a route whose every body field is optional takes no body, or an empty one, as {}", async () => {
  const org = await createTestOrg();
  const writer = await org.keyWith(["identity:read", "identity:write", "telemetry:read", "telemetry:write"]);
  const { app } = await testRuntime();
  // No body at all, as `curl -X POST` sends it …
  const bare = await app.handle(
    new Request(`http://test.local${keys}`, { method: "POST", headers: { "x-api-key": writer } }),
  );
  expect(bare.status).toBe(201);
  expect(((await bare.json()) as { scopes: string[] }).scopes).toEqual([
    "telemetry:read",
    "telemetry:write",
    "identity:read",
  ]);
  // … and an empty JSON body.
  const empty = await app.handle(
    new Request(`http://test.local${keys}`, {
      method: "POST",
      headers: { "x-api-key": writer, "content-type": "application/json", "content-length": "0" },
      body: "",
    }),
  );
  expect(empty.status).toBe(201);
});

test("a route with a required body field still refuses a missing body, saying a document is required", async () => {
  const org = await createTestOrg({ type: "agent" });
  const res = await call("POST", "/sessions/end", { key: org.key });
  expect([res.status, res.body.code, res.body.detail]).toEqual([
    400,
    "empty_body",
    "request body is empty; a JSON document is required",
  ]);
});

test("a route that takes no body ignores an empty one, whatever Content-Type says", async () => {
  const org = await createTestOrg();
  const admin = await org.keyWith(["identity:read", "identity:write"]);
  const { app } = await testRuntime();
  const revoke = async (init: { headers: Record<string, string>; body?: string | ReadableStream<Uint8Array> }) => {
    const made = await call("POST", keys, { key: admin, body: { scopes: ["identity:read"] } });
    const res = await app.handle(
      new Request(`http://test.local${keys}/${made.body.id}`, {
        method: "DELETE",
        headers: { "x-api-key": admin, ...init.headers },
        body: init.body,
      }),
    );
    return [res.status, typeof ((await res.json()) as { revoked_at?: unknown }).revoked_at];
  };
  const nothing = () => new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
  const contentTypes: Record<string, string>[] = [
    { "content-type": "application/json" },
    { "content-type": "text/plain" },
    {},
  ];
  for (const contentType of contentTypes) {
    expect(await revoke({ headers: contentType })).toEqual([200, "string"]);
    expect(await revoke({ headers: { ...contentType, "content-length": "0" }, body: "" })).toEqual([200, "string"]);
    // Sent chunked: a stream of no bytes, without Content-Length.
    expect(await revoke({ headers: contentType, body: nothing() })).toEqual([200, "string"]);
  }
});

test("ingest's documents, checked by their handlers, are required too: an empty body is empty_body", async () => {
  const agent = await createTestOrg({ type: "agent" });
  const { app } = await testRuntime();
  for (const path of ["/events", "/sessions/bulk"]) {
    const headerSets: Record<string, string>[] = [{}, { "content-type": "application/json" }];
    for (const headers of headerSets) {
      for (const body of [undefined, new ReadableStream<Uint8Array>({ start: (controller) => controller.close() })]) {
        const res = await app.handle(
          new Request(`http://test.local${path}`, {
            method: "POST",
            headers: { "x-api-key": agent.key, ...headers },
            body,
          }),
        );
        expect([path, res.status, ((await res.json()) as { code: string }).code]).toEqual([path, 400, "empty_body"]);
      }
    }
  }
});

test("a route's body is its schema, a required document its handler checks, or none; both at once stops start-up", () => {
  const schema = t.Object({ name: t.String() });
  const document = { required: true, content: { "application/json": { schema } } };
  const route = (path: string, hooks: { body?: unknown; detail?: unknown }) => ({ method: "POST", path, hooks });
  const bodyOf = routeBodyIndex([
    route("/schema", { body: schema }),
    route("/document", { detail: { requestBody: document } }),
    route("/optional", { detail: { requestBody: { ...document, required: false } } }),
    route("/none", {}),
  ]);
  expect(["/schema", "/document", "/optional", "/none"].map((path) => bodyOf("POST", path))).toEqual([
    schema,
    "checkedByHandler",
    undefined,
    undefined,
  ]);
  expect(() => routeBodyIndex([route("/both", { body: schema, detail: { requestBody: document } })])).toThrow(
    "POST /both declares both a body schema and detail.requestBody",
  );
});
