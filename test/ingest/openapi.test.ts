import { expect, test } from "bun:test";
import { call } from "../support/http.ts";

test("the OpenAPI document shows every ingest endpoint with its request model and limits", async () => {
  const res = await call("GET", "/openapi/json");
  expect(res.status).toBe(200);
  const paths = res.body.paths;
  for (const path of ["/sessions/start", "/sessions/end", "/sessions/bulk", "/events", "/click-tokens"]) {
    expect(paths[path]?.post?.requestBody?.content?.["application/json"]?.schema, path).toBeDefined();
  }
  const events = paths["/events"].post;
  expect(events.description).toContain("at most 1000 events");
  expect(JSON.stringify(events.requestBody)).toContain("event_batch");
});
