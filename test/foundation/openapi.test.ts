import { expect, test } from "bun:test";
import { call } from "../support/http.ts";

test("the OpenAPI document is generated from the models and served with its UI", async () => {
  const doc = await call("GET", "/openapi/json");
  expect(doc.status).toBe(200);
  expect(doc.body.openapi).toMatch(/^3\./);
  expect(doc.body.paths["/health"].get).toBeDefined();
  expect(doc.body.paths["/ready"].get.responses["200"]).toBeDefined();
  expect(doc.body.components.securitySchemes.apiKey).toMatchObject({ type: "apiKey", name: "X-API-Key" });
  const ui = await call("GET", "/openapi");
  expect(ui.status).toBe(200);
  expect(ui.headers.get("content-type")).toContain("text/html");
});
