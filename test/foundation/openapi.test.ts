import { expect, test } from "bun:test";
import { call } from "../support/http.ts";

test("the OpenAPI document is generated from the models and served with its UI", async () => {
  const doc = await call("GET", "/openapi/json");
  expect(doc.status).toBe(200);
  expect(doc.body.openapi).toMatch(/^3\./);
  expect(doc.body.paths["/health"].get).toBeDefined();
  expect(doc.body.paths["/ready"].get.responses["200"]).toBeDefined();
  expect(doc.body.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", name: "X-API-Key" });
  // Every operation documents its problem responses against one shared schema.
  expect(doc.body.components.schemas.Problem.required).toEqual(["type", "title", "status", "code"]);
  for (const [path, operations] of Object.entries(doc.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      const problem = operation.responses?.["4XX"]?.content?.["application/problem+json"]?.schema;
      expect({ path, method, problem }).toEqual({ path, method, problem: { $ref: "#/components/schemas/Problem" } });
      // Every route but the health checks is rate limited, and says how to back off.
      const retryAfter = operation.responses?.["429"]?.headers?.["Retry-After"];
      const success = Object.entries(operation.responses ?? {}).find(([status]) => status.startsWith("2"))?.[1] as any;
      if (success && retryAfter) expect(success.headers?.["RateLimit-Remaining"]).toBeDefined();
      expect({ path, method, limited: retryAfter !== undefined }).toEqual({
        path,
        method,
        limited: path !== "/health" && path !== "/ready",
      });
    }
  }
  const ui = await call("GET", "/openapi");
  expect(ui.status).toBe(200);
  expect(ui.headers.get("content-type")).toContain("text/html");
  // The page works offline: every script and stylesheet comes from the service itself.
  const html = ui.body as string;
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
  expect(assets).toEqual(["/openapi/assets/swagger-ui.css", "/openapi/assets/swagger-ui-bundle.js"]);
  for (const asset of assets) {
    const served = await call("GET", asset);
    expect({ asset, status: served.status }).toEqual({ asset, status: 200 });
  }
  expect((await call("GET", "/openapi/assets/package.json")).status).toBe(404);
});

test("every operation has a summary", async () => {
  const doc = await call("GET", "/openapi/json");
  const missing = Object.entries(doc.body.paths as Record<string, Record<string, { summary?: string }>>).flatMap(
    ([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => !operation.summary)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
  );
  expect(missing).toEqual([]);
});
