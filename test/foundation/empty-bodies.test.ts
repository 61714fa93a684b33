import { expect, test } from "bun:test";
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
